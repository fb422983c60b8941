/**
 * When serve writes its own webhook configurations (`--register-webhooks NAMESPACE/SERVICE`,
 * cluster/registration.ts says how): not before readiness (/readyz would answer 200: ports open,
 * policies loaded, every cache synced, not draining), and only with a caBundle that verifies the
 * certificate served, for the Service's DNS names. Then again on every policy reload and certificate
 * reload. What is written is `celgate manifests`' content for the policies served
 * (manifests/webhooks.ts), so the two ways of installing cannot disagree.
 */
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Registry } from "prom-client";
import type { ApiClient } from "../../cluster/client.ts";
import { createRegistrationMetrics } from "../../cluster/metrics.ts";
import type { ClusterLog } from "../../cluster/observe.ts";
import { WebhookRegistrar } from "../../cluster/registration.ts";
import type { CompiledPolicySet } from "../../compile/policy.ts";
import { configurationName, serviceDnsNames, webhookManifests } from "../../manifests/webhooks.ts";
import { err, ok, type Result } from "../../result.ts";
import { type HealthState, notReadyBecause } from "./health.ts";

export interface RegisterWebhooksOptions {
  /** The Service the API server calls, and its namespace (never intercepted). */
  readonly service: string;
  readonly namespace: string;
  /** PEM file of the CA the API server is to trust; default: the served certificate itself. */
  readonly caFile?: string;
  /** The Service port the API server calls; default manifests' DEFAULT_PORT. */
  readonly port?: number;
}

export interface RegistrationDeps {
  readonly client: ApiClient;
  readonly options: RegisterWebhooksOptions;
  /** The certificate file served (re-read at each write: it is reloaded when renewed). */
  readonly certFile: string;
  readonly health: HealthState;
  /** The policy set served now (files, plus the cluster's with --policies-from-cluster). */
  readonly set: () => CompiledPolicySet;
  readonly log: ClusterLog;
  readonly registry: Registry;
  /** How often readiness is checked until the first write; default 200 ms. */
  readonly pollMs?: number;
  readonly retryMs?: number;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The base64 caBundle for `caPem`, or why it would not let the API server trust `certPem` for the
 * Service: one of its certificates must have issued (and signed) the first certificate of `certPem`
 * (or be it), and that certificate must name the Service's DNS names.
 */
export function verifiedCaBundle(
  caPem: string,
  certPem: string,
  service: string,
  namespace: string,
): Result<string, string> {
  const leafPem = certPem.match(PEM_BLOCK)?.[0];
  const cas = caPem.match(PEM_BLOCK) ?? [];
  if (leafPem === undefined) return err("the served certificate file holds no PEM certificate");
  if (cas.length === 0) return err("the CA file holds no PEM certificate");
  let leaf: X509Certificate;
  let authorities: X509Certificate[];
  try {
    leaf = new X509Certificate(leafPem);
    authorities = cas.map((c) => new X509Certificate(c));
  } catch (e) {
    return err(`a certificate does not parse: ${(e as Error).message}`);
  }
  if (!authorities.some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey)))
    return err(`the served certificate (${leaf.subject.replace(/\n/g, ", ")}) is not signed by the CA given`);
  for (const dns of serviceDnsNames(service, namespace))
    if (leaf.checkHost(dns) === undefined) return err(`the served certificate does not name ${dns}`);
  return ok(Buffer.from(cas.join("\n") + "\n", "utf8").toString("base64"));
}

export class WebhookRegistration {
  private readonly registrar: WebhookRegistrar;
  private poll: NodeJS.Timeout | undefined;
  private started = false;
  private lastProblem = "";

  constructor(private readonly deps: RegistrationDeps) {
    const { service, namespace } = deps.options;
    this.registrar = new WebhookRegistrar(deps.client, configurationName(service, namespace), {
      log: deps.log,
      labels: { "app.kubernetes.io/name": "celgate", "app.kubernetes.io/instance": service },
      observer: createRegistrationMetrics(deps.registry),
      ...(deps.retryMs !== undefined ? { retryMs: deps.retryMs } : {}),
    });
  }

  /** Whether the configurations in the cluster are the ones the policies served need. */
  get current(): boolean {
    return this.registrar.current;
  }

  /** Waits for readiness, then writes; later changes write through `changed`. */
  start(): void {
    const check = () => {
      if (notReadyBecause(this.deps.health) !== undefined) return;
      clearInterval(this.poll);
      this.started = true;
      this.deps.log.info(
        { event: "webhook-registration", name: this.registrar.name },
        "ready: writing the webhook configurations",
      );
      void this.changed();
    };
    this.poll = setInterval(check, this.deps.pollMs ?? 200);
    this.poll.unref();
    check();
  }

  /** The policies or the certificate changed: write again (once ready). */
  async changed(): Promise<void> {
    if (!this.started) return;
    const { options } = this.deps;
    const bundle = await this.caBundle();
    if (!bundle.ok) {
      if (bundle.error !== this.lastProblem)
        this.deps.log.error(
          { event: "webhook-registration", name: this.registrar.name },
          `not writing the webhook configurations: ${bundle.error}`,
        );
      this.lastProblem = bundle.error;
      return;
    }
    this.lastProblem = "";
    const manifests = webhookManifests(this.deps.set(), {
      service: options.service,
      namespace: options.namespace,
      ...(options.port !== undefined ? { port: options.port } : {}),
      caBundle: bundle.value,
    });
    await this.registrar.register(manifests.documents);
  }

  stop(): void {
    clearInterval(this.poll);
    this.registrar.stop();
  }

  private async caBundle(): Promise<Result<string, string>> {
    const { options, certFile } = this.deps;
    const caFile = options.caFile ?? certFile;
    let cert: string;
    let ca: string;
    try {
      cert = await readFile(certFile, "utf8");
      ca = caFile === certFile ? cert : await readFile(caFile, "utf8");
    } catch (e) {
      return err((e as Error).message);
    }
    return verifiedCaBundle(ca, cert, options.service, options.namespace);
  }
}
