/**
 * Liveness and readiness. `/healthz` answers while the process serves at all; `/readyz` only while
 * policies are loaded and the server is not draining, so a pod on its way out leaves the Service
 * while it still answers the requests that reach it.
 */
import { type HttpsApp, problem } from "./http.ts";

export const HEALTH_PATHS = ["/healthz", "/readyz"] as const;

export function registerHealthRoutes(app: HttpsApp, draining: () => boolean, readiness: () => boolean): void {
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    if (draining()) return reply.code(503).send(problem(503, "draining"));
    let ready = false;
    try {
      ready = readiness();
    } catch {
      ready = false;
    }
    if (!ready) return reply.code(503).send(problem(503, "policies not loaded"));
    return { status: "ready" };
  });
}
