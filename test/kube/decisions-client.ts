/**
 * Requests to the real API server as another user, for the Decisions differential test: the admin's
 * client certificate (system:masters may impersonate anyone) with the impersonation headers of
 * k8s.io/apiserver/pkg/endpoints/filters/impersonation.go (Impersonate-User, -Group, -Uid,
 * -Extra-<key>), and the answer's `Audit-Id`, which names its event in the audit log.
 */
import { Agent, request as httpsRequest } from "node:https";
import type { UserInfo } from "../../src/request/types.ts";
import type { ControlPlane } from "../helpers/kube-control-plane.ts";

export interface Answer {
  readonly status: number;
  readonly body: unknown;
  /** `Warning` headers, their text only. */
  readonly warnings: readonly string[];
  readonly auditId: string;
}

const TIMEOUT_MS = 60_000;

function warningsOf(header: string | string[] | undefined): string[] {
  const all = header === undefined ? [] : Array.isArray(header) ? header : [header];
  // RFC 7234 warn-value: 299 - "text"; several may share one header, comma-separated.
  return all.flatMap((h) =>
    [...h.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? "").replace(/\\(.)/g, "$1")),
  );
}

/** The impersonation headers for `user`; extra keys are percent-encoded as the filter decodes them. */
export function impersonationHeaders(user: UserInfo): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { "impersonate-user": user.username };
  if (user.groups.length > 0) headers["impersonate-group"] = [...user.groups];
  if (user.uid !== undefined) headers["impersonate-uid"] = user.uid;
  for (const [key, values] of Object.entries(user.extra ?? {}))
    headers[`impersonate-extra-${encodeURIComponent(key)}`] = [...values];
  return headers;
}

/** A client of `plane` as its admin, optionally impersonating a user; never rejects on a status. */
export class ImpersonatingClient {
  private readonly agent: Agent;
  private readonly url: URL;

  constructor(plane: ControlPlane) {
    this.url = new URL(plane.url);
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: plane.ca,
      cert: plane.admin.cert,
      key: plane.admin.key,
    });
  }

  send(method: string, path: string, body?: unknown, as?: UserInfo): Promise<Answer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: this.url.hostname,
          port: this.url.port,
          path,
          method,
          agent: this.agent,
          headers: {
            accept: "application/json",
            ...(as === undefined ? {} : impersonationHeaders(as)),
            ...(payload === undefined
              ? {}
              : { "content-type": "application/json", "content-length": payload.length }),
          },
          timeout: TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // Not JSON: the text is the body.
            }
            const auditId = res.headers["audit-id"];
            resolve({
              status: res.statusCode ?? 0,
              body: parsed,
              warnings: warningsOf(res.headers.warning),
              auditId: typeof auditId === "string" ? auditId : "",
            });
          });
        },
      );
      req.on("timeout", () =>
        req.destroy(new Error(`${method} ${path}: no answer in ${TIMEOUT_MS / 1000} s`)),
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
