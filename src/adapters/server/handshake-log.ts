/**
 * Failed TLS handshakes, above all the client certificates `--client-ca` turns away: logged as
 * warnings, at most one line per reason every ten seconds (a scanner or a misconfigured client
 * retrying in a loop must not flood the log), and counted in metrics by reason.
 *
 * With a client CA the server asks every client for a certificate and this module refuses the
 * connections whose certificate is missing or not signed by the CA, once the handshake is done and
 * before the HTTP layer sees them: Node's own refusal (`rejectUnauthorized`) drops them without an
 * event to log.
 */
import type { Server as TlsServer, TLSSocket } from "node:tls";
import type { ServerLog } from "./server-log.ts";

/** Why a handshake failed, as a metric label: a fixed set, never the error text. */
export type HandshakeFailure =
  | "no_client_certificate"
  | "untrusted_client_certificate"
  | "protocol"
  | "timeout"
  | "reset"
  | "other";

export function handshakeFailure(error: Error & { code?: string }): HandshakeFailure {
  const text = `${error.code ?? ""} ${error.message}`.toLowerCase().replaceAll("_", " ");
  if (text.includes("did not return a certificate") || text.includes("certificate required"))
    return "no_client_certificate";
  if (
    text.includes("certificate verify failed") ||
    text.includes("unknown ca") ||
    text.includes("unable to get") ||
    text.includes("self-signed") ||
    text.includes("self signed") ||
    text.includes("certificate has expired") ||
    text.includes("unsupported certificate purpose")
  )
    return "untrusted_client_certificate";
  if (text.includes("timeout") || text.includes("timed out")) return "timeout";
  if (error.code === "ECONNRESET" || text.includes("socket hang up")) return "reset";
  if (text.includes("ssl") || text.includes("tls") || text.includes("alert") || text.includes("version"))
    return "protocol";
  return "other";
}

const WHAT: Readonly<Record<HandshakeFailure, string>> = {
  no_client_certificate: "client presented no certificate (--client-ca requires one)",
  untrusted_client_certificate: "client certificate not signed by --client-ca, or not valid",
  protocol: "TLS protocol error",
  timeout: "handshake did not finish in time",
  reset: "client closed the connection during the handshake",
  other: "handshake failed",
};

/** An OpenSSL verification code (`socket.authorizationError`) as a reason. */
function verificationFailure(code: string | undefined): HandshakeFailure {
  // Node reports a missing certificate as UNABLE_TO_GET_ISSUER_CERT (crypto_tls.cc, VerifyError).
  return code === "UNABLE_TO_GET_ISSUER_CERT" ? "no_client_certificate" : "untrusted_client_certificate";
}

export interface HandshakeLogOptions {
  /** The least time between two lines of one reason. */
  readonly everyMs?: number;
  readonly count?: (reason: HandshakeFailure) => void;
  readonly now?: () => number;
}

/**
 * Listens for failed handshakes on `server` and, when `requireClientCertificate`, refuses the
 * connections whose client certificate did not verify; see the module comment.
 */
export function logHandshakeFailures(
  server: TlsServer,
  log: ServerLog,
  options: HandshakeLogOptions & { readonly requireClientCertificate?: boolean } = {},
): void {
  const everyMs = options.everyMs ?? 10_000;
  const now = options.now ?? Date.now;
  const last = new Map<HandshakeFailure, { at: number; suppressed: number }>();
  const report = (reason: HandshakeFailure, peer: string | undefined, error: string): void => {
    options.count?.(reason);
    const t = now();
    const seen = last.get(reason);
    if (seen !== undefined && t - seen.at < everyMs) {
      seen.suppressed++;
      return;
    }
    last.set(reason, { at: t, suppressed: 0 });
    log.warn(
      {
        event: "tls-handshake-failed",
        reason,
        peer,
        error,
        ...(seen !== undefined && seen.suppressed > 0 ? { suppressed: seen.suppressed } : {}),
      },
      `TLS handshake rejected: ${WHAT[reason]}`,
    );
  };
  server.on("tlsClientError", (error: Error & { code?: string }, socket: TLSSocket) =>
    report(handshakeFailure(error), socket.remoteAddress, error.message),
  );
  if (options.requireClientCertificate)
    // First of the listeners, so the HTTP layer never reads from a refused connection.
    server.prependListener("secureConnection", (socket: TLSSocket) => {
      if (socket.authorized) return;
      const code = String(socket.authorizationError ?? "no certificate");
      report(verificationFailure(code), socket.remoteAddress, code);
      socket.destroy();
    });
}
