/**
 * Hand-written fakes and a fixture for the webhook server tests: admitters that return fixed
 * decisions (the real engine is tested on its own), a review builder and a started server on
 * 127.0.0.1 with a throwaway certificate.
 */
import { Writable } from "node:stream";
import type { TestContext } from "node:test";
import { Registry } from "prom-client";
import { generateSelfSignedCertificate } from "../../../src/adapters/server/tls.ts";
import { createWebhookMetrics, type WebhookMetrics } from "../../../src/adapters/server/metrics.ts";
import { buildServer, type ServerDeps, type WebhookServer } from "../../../src/adapters/server/server.ts";
import type { Admitter, ReviewOptions } from "../../../src/adapters/server/admitter.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";

export const serverCert = generateSelfSignedCertificate({ hosts: ["localhost", "127.0.0.1"], days: 1 });

export function decision(overrides: Partial<AdmissionDecision> = {}): AdmissionDecision {
  return { allowed: true, warnings: [], auditAnnotations: {}, results: [], cost: 0, ...overrides };
}

/** Answers every review with the same decision and remembers what it was asked. */
export class FixedAdmitter implements Admitter {
  readonly calls: { request: AdmissionRequest; options: ReviewOptions }[] = [];
  readonly #decision: AdmissionDecision;
  constructor(fixed: AdmissionDecision = decision()) {
    this.#decision = fixed;
  }
  review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision {
    this.calls.push({ request, options });
    return this.#decision;
  }
}

/** An engine bug: throws on every review. */
export class ThrowingAdmitter implements Admitter {
  review(): AdmissionDecision {
    throw new Error("engine bug: something undefined");
  }
}

/** An engine bug of the other kind: returns something that is not a decision. */
export class BrokenAdmitter implements Admitter {
  review(): AdmissionDecision {
    return undefined as unknown as AdmissionDecision;
  }
}

export function admissionReview(
  options: { apiVersion?: string; uid?: string; operation?: string; name?: string } = {},
): Record<string, unknown> {
  return {
    apiVersion: options.apiVersion ?? "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: options.uid ?? "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: { group: "apps", version: "v1", kind: "Deployment" },
      resource: { group: "apps", version: "v1", resource: "deployments" },
      name: options.name ?? "web",
      namespace: "team-a",
      operation: options.operation ?? "CREATE",
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      object: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: options.name ?? "web" },
        spec: { replicas: 3, secretToken: "s3cr3t-value" },
      },
      oldObject: null,
      dryRun: false,
    },
  };
}

export interface Started {
  readonly server: WebhookServer;
  readonly port: number;
  readonly metrics: WebhookMetrics;
  readonly registry: Registry;
}

/** A listening server on 127.0.0.1:0, closed when the test ends. */
export async function startServer(
  t: TestContext,
  deps: Partial<ServerDeps> & { admitter: () => Admitter },
): Promise<Started> {
  const registry = new Registry();
  const metrics = deps.metrics ?? createWebhookMetrics(registry);
  const server = await buildServer({
    tls: { cert: serverCert.cert, key: serverCert.key },
    logger: false,
    metrics,
    readiness: () => true,
    drainMs: 0,
    ...deps,
  });
  t.after(() => server.close());
  const address = await server.start({ host: "127.0.0.1", port: 0 });
  if (!address.ok) throw new Error(address.error);
  return { server, port: address.value.port, metrics, registry: metrics.registry };
}

/** A log stream for a server under test, and the lines written to it so far. */
export function logLines(): { readonly lines: string[]; readonly stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}
