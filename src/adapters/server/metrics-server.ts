/**
 * The metrics port: plain HTTP `GET /metrics`, and the liveness and readiness probes, so scraping
 * and the kubelet need neither the webhook's certificate nor a client certificate, and the
 * admission port serves only the API server.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from "fastify";
import type { Registry } from "prom-client";
import type { Result } from "../../result.ts";
import { type HealthState, registerHealthRoutes } from "./health.ts";
import { problem } from "./http.ts";
import { type ListenAddress, type ListenOptions, listen } from "./lifecycle.ts";

type LoggerOptions = Exclude<NonNullable<FastifyServerOptions["logger"]>, boolean>;

export interface MetricsServer {
  readonly app: FastifyInstance;
  start(options: ListenOptions): Promise<Result<ListenAddress, string>>;
  close(): Promise<void>;
}

/** `GET /metrics` on its own port, and `/healthz` and `/readyz` when `health` is given. */
export async function buildMetricsServer(
  registry: Registry,
  options: { readonly logger?: LoggerOptions | false; readonly health?: HealthState } = {},
): Promise<MetricsServer> {
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.get("/metrics", async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header("content-type", registry.contentType).send(text);
  });
  if (options.health !== undefined) registerHealthRoutes(app, options.health);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(problem(404, "no such endpoint")));
  await app.ready();
  return {
    app,
    start: (listenOptions) => listen(app, "http", listenOptions, "metrics"),
    close: () => app.close(),
  };
}
