/**
 * Liveness and readiness. `/healthz` answers while the process serves at all; `/readyz` only while
 * policies are loaded and the server is not draining, so a pod on its way out leaves the Service
 * while it still answers the requests that reach it. Both are served on the admission port and on
 * the metrics port: with `--client-ca` the admission port asks every client for a certificate,
 * which the kubelet's probes do not have, so the Deployment probes the metrics port (plain HTTP).
 */
import type { FastifyInstance, RawServerBase } from "fastify";
import { problem } from "./http.ts";

export const HEALTH_PATHS = ["/healthz", "/readyz"] as const;

/**
 * What readiness depends on: the server's drain, and whatever the caller adds (policies loaded,
 * ports bound, the cluster's caches): true, or false or the reason it is not ready.
 */
export interface HealthState {
  readonly draining: () => boolean;
  readonly readiness: () => boolean | string;
}

/** Why the server is not ready, or undefined when it is. */
export function notReadyBecause(state: HealthState): string | undefined {
  if (state.draining()) return "draining";
  let ready: boolean | string = false;
  try {
    ready = state.readiness();
  } catch {
    ready = false;
  }
  if (ready === true) return undefined;
  return typeof ready === "string" ? ready : "policies not loaded";
}

export function registerHealthRoutes<S extends RawServerBase>(
  app: FastifyInstance<S>,
  state: HealthState,
): void {
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const problemText = notReadyBecause(state);
    if (problemText !== undefined) return reply.code(503).send(problem(503, problemText));
    return { status: "ready" };
  });
}
