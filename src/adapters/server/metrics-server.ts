/**
 * The metrics endpoint: plain HTTP `GET /metrics` on a port of its own, so scraping needs neither
 * the webhook's certificate nor a client certificate, and the webhook port serves only the API
 * server.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from "fastify";
import type { Registry } from "prom-client";
import { problem } from "./http.ts";
import { type ListenAddress, type ListenOptions, listen } from "./lifecycle.ts";

type LoggerOptions = Exclude<NonNullable<FastifyServerOptions["logger"]>, boolean>;

export interface MetricsServer {
  readonly app: FastifyInstance;
  start(options: ListenOptions): Promise<ListenAddress>;
  close(): Promise<void>;
}

/**
 * Plain HTTP `GET /metrics` on its own port, so scraping needs neither the webhook's certificate
 * nor a client certificate, and the webhook port serves only the API server.
 */
export async function buildMetricsServer(
  registry: Registry,
  options: { readonly logger?: LoggerOptions | false } = {},
): Promise<MetricsServer> {
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.get("/metrics", async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header("content-type", registry.contentType).send(text);
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(problem(404, "no such endpoint")));
  await app.ready();
  return {
    app,
    start: (listenOptions) => listen(app, "http", listenOptions),
    close: () => app.close(),
  };
}
