/**
 * The parts of the webhook's life that are about the process rather than about admission: listening,
 * swapping the serving certificate without a restart, following certificate files as they rotate,
 * draining before exit, and signals. Kubernetes removes a terminating pod from the Service's
 * endpoints only some time after sending SIGTERM, so the server keeps answering for a while after
 * it reports itself unready; exiting at once would fail the reviews still routed to it.
 */
import { createHash, createPrivateKey, X509Certificate } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import type { Server as TlsServer } from "node:tls";
import type { FastifyInstance } from "fastify";
import { err, ok, type Result } from "../../result.ts";
import { loadTlsMaterial } from "./tls.ts";

export interface ListenOptions {
  readonly host: string;
  /** 0 picks a free port; the returned address says which. */
  readonly port: number;
}

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  readonly url: string;
}

/** Why a port could not be opened, in words an operator can act on. */
function listenProblem(e: unknown, what: string, options: ListenOptions): string {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `${options.host.includes(":") ? `[${options.host}]` : options.host}:${options.port}`;
  if (code === "EADDRINUSE") return `${what} port ${where} is already in use`;
  if (code === "EACCES") return `${what} port ${where}: permission denied`;
  if (code === "EADDRNOTAVAIL") return `${what} address ${options.host} is not an address of this machine`;
  return `${what} port ${where}: ${e instanceof Error ? e.message : String(e)}`;
}

/**
 * Starts listening and reports the bound address (useful with port 0). A port that cannot be
 * opened (in use, not permitted, an address not ours) is an expected failure, returned as a sentence.
 */
export async function listen(
  app: Pick<FastifyInstance, "listen" | "server">,
  scheme: "http" | "https",
  options: ListenOptions,
  what = scheme === "https" ? "admission" : "metrics",
): Promise<Result<ListenAddress, string>> {
  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (e) {
    return err(listenProblem(e, what, options));
  }
  const address = app.server.address() as AddressInfo | string | null;
  if (address === null || typeof address === "string")
    throw new Error(`server is not listening on a TCP address: ${String(address)}`);
  const host = address.address;
  const shown = host.includes(":") ? `[${host}]` : host;
  return ok({ host, port: address.port, url: `${scheme}://${shown}:${address.port}` });
}

// ---------------------------------------------------------------------------------------------
// Certificates

export interface CertificateInfo {
  readonly notAfter: Date;
  readonly serialNumber: string;
  readonly subject: string;
}

/** Checks that a PEM certificate and key belong together, before any handshake depends on it. */
export function checkKeyPair(cert: string, key: string): Result<CertificateInfo, string> {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    return err(`not a valid certificate: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key)))
      return err("the private key does not match the certificate");
  } catch (e) {
    return err(`not a valid private key: ${e instanceof Error ? e.message : String(e)}`);
  }
  return ok({ notAfter: new Date(x509.validTo), serialNumber: x509.serialNumber, subject: x509.subject });
}

/** What a secure context needs besides the pair; setSecureContext forgets anything not passed again. */
export interface SecureContextBase {
  readonly ca?: string;
  readonly minVersion: "TLSv1.2" | "TLSv1.3";
  readonly ciphers: string;
  readonly secureOptions: number;
}

/**
 * Replaces the certificate for new handshakes. Connections already open keep the one they
 * negotiated, so no request in flight is dropped. The old context stays when the pair is bad.
 */
export function swapSecureContext(
  server: TlsServer,
  base: SecureContextBase,
  cert: string,
  key: string,
): Result<CertificateInfo, string> {
  const checked = checkKeyPair(cert, key);
  if (!checked.ok) return checked;
  try {
    server.setSecureContext({
      cert,
      key,
      minVersion: base.minVersion,
      ciphers: base.ciphers,
      secureOptions: base.secureOptions,
      ...(base.ca !== undefined ? { ca: base.ca } : {}),
    });
  } catch (e) {
    return err(`cannot build a TLS context: ${e instanceof Error ? e.message : String(e)}`);
  }
  return checked;
}

export function pairFingerprint(cert: string, key: string): string {
  return createHash("sha256").update(cert).update("\0").update(key).digest("hex");
}

export type TlsReloadEvent =
  | { readonly ok: true; readonly certificate: CertificateInfo }
  | { readonly ok: false; readonly error: string };

export interface TlsWatcher {
  /** Looks at the files now (what the watchers and the poll timer do); resolves after any swap. */
  check(): void;
  close(): void;
}

export interface TlsWatchOptions {
  /** Wait for quiet before reading: writers replace the two files one after the other. */
  readonly debounceMs?: number;
  /** Read the files this often anyway, for file systems where fs.watch says nothing. */
  readonly pollMs?: number;
  /** The pair being served now; the watcher swaps only when the files hold something else. */
  readonly current?: { readonly cert: string; readonly key: string };
}

/**
 * Follows a certificate and key on disk. It watches the directories rather than the files because
 * Kubernetes updates a mounted Secret by re-pointing a `..data` symlink, which a watch on the old
 * file never reports. A pair that fails to load or does not match is reported once and the old
 * one kept; the next change is tried again. One function a little over the usual length: the
 * watchers, the poll and the debounce share the state of one pair, and read best side by side.
 */
export function watchTlsFiles(
  certFile: string,
  keyFile: string,
  apply: (cert: string, key: string) => Result<CertificateInfo, string>,
  onReload: (event: TlsReloadEvent) => void,
  options: TlsWatchOptions = {},
): TlsWatcher {
  const debounceMs = options.debounceMs ?? 250;
  const pollMs = options.pollMs ?? 30_000;
  let served =
    options.current !== undefined ? pairFingerprint(options.current.cert, options.current.key) : "";
  if (served === "") {
    const initial = loadTlsMaterial(certFile, keyFile);
    if (initial.ok) served = pairFingerprint(initial.value.cert, initial.value.key);
  }
  let lastError: string | undefined;
  let closed = false;
  let pending: NodeJS.Timeout | undefined;

  const report = (event: TlsReloadEvent): void => {
    try {
      onReload(event);
    } catch {
      // A failing listener must not stop the watcher; the swap itself has happened or not.
    }
  };

  const check = (): void => {
    if (closed) return;
    const loaded = loadTlsMaterial(certFile, keyFile);
    if (!loaded.ok) {
      if (loaded.error.message !== lastError) {
        lastError = loaded.error.message;
        report({ ok: false, error: loaded.error.message });
      }
      return;
    }
    const fingerprint = pairFingerprint(loaded.value.cert, loaded.value.key);
    if (fingerprint === served) {
      lastError = undefined;
      return;
    }
    const applied = apply(loaded.value.cert, loaded.value.key);
    if (!applied.ok) {
      if (applied.error !== lastError) {
        lastError = applied.error;
        report({ ok: false, error: applied.error });
      }
      return;
    }
    served = fingerprint;
    lastError = undefined;
    report({ ok: true, certificate: applied.value });
  };

  const schedule = (): void => {
    if (closed) return;
    if (pending !== undefined) clearTimeout(pending);
    pending = setTimeout(() => {
      pending = undefined;
      check();
    }, debounceMs);
    pending.unref();
  };

  const watchers: FSWatcher[] = [];
  for (const dir of new Set([dirname(certFile), dirname(keyFile)])) {
    try {
      const w = watch(dir, { persistent: false }, schedule);
      // Losing the watch (directory removed, inotify limits) leaves the poll timer in charge.
      w.on("error", () => w.close());
      watchers.push(w);
    } catch {
      // Same: no watch, polling only.
    }
  }
  const poll = setInterval(check, pollMs);
  poll.unref();

  return {
    check,
    close() {
      closed = true;
      if (pending !== undefined) clearTimeout(pending);
      clearInterval(poll);
      for (const w of watchers) w.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Draining and signals

export interface DrainControl {
  /** Flips readiness off at once, keeps serving for drainMs, then closes; the same promise each call. */
  drain(): Promise<void>;
  /** Ends the drain window now, if one is running: the close follows at once. */
  cut(): void;
}

export function createDrain(options: {
  readonly drainMs: number;
  readonly beginDraining: () => void;
  readonly close: () => Promise<void>;
}): DrainControl {
  let draining: Promise<void> | undefined;
  let endWindow: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  return {
    drain() {
      draining ??= (async () => {
        options.beginDraining();
        if (options.drainMs > 0)
          await new Promise<void>((resolve) => {
            endWindow = resolve;
            timer = setTimeout(resolve, options.drainMs);
          });
        await options.close();
      })();
      return draining;
    },
    cut() {
      if (timer !== undefined) clearTimeout(timer);
      endWindow?.();
    },
  };
}

/** Only what the signal handlers need of `process`, so tests can pass an EventEmitter. */
export interface SignalTarget {
  once(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

export interface SignalOptions {
  readonly signals?: readonly NodeJS.Signals[];
  readonly target?: SignalTarget;
  readonly exit?: (code: number) => void;
  readonly log?: (message: string) => void;
  /**
   * Called on a second signal before `exit(1)`: drops whatever the drain still waits for (its
   * window, connections, requests), so nothing keeps the process from ending.
   */
  readonly abort?: () => void;
}

/**
 * On the first SIGTERM or SIGINT: drain, then exit 0 (1 if closing failed). A second signal aborts
 * the drain and exits at once with 1, for an operator who does not want to wait. Returns a function
 * that removes the handlers again.
 */
export function installSignalHandlers(drain: () => Promise<void>, options: SignalOptions = {}): () => void {
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const target: SignalTarget = options.target ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.log ?? (() => {});
  let received = false;
  const listeners = new Map<NodeJS.Signals, () => void>();

  const uninstall = (): void => {
    for (const [signal, listener] of listeners) target.off(signal, listener);
    listeners.clear();
  };

  const arm = (signal: NodeJS.Signals): void => {
    const listener = (): void => {
      listeners.delete(signal);
      if (received) {
        log(`received ${signal} again; exiting now`);
        uninstall();
        options.abort?.();
        exit(1);
        return;
      }
      received = true;
      log(`received ${signal}; draining`);
      // Re-arm so a second signal is ours (exit now) rather than Node's default.
      arm(signal);
      drain().then(
        () => {
          uninstall();
          exit(0);
        },
        (e: unknown) => {
          log(`shutdown failed: ${e instanceof Error ? e.message : String(e)}`);
          uninstall();
          exit(1);
        },
      );
    };
    listeners.set(signal, listener);
    target.once(signal, listener);
  };

  for (const signal of signals) arm(signal);
  return uninstall;
}
