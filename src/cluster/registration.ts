/**
 * `serve --register-webhooks`: celgate writes its own ValidatingWebhookConfiguration and
 * MutatingWebhookConfiguration (exactly what `celgate manifests` prints for the policies it serves,
 * with the caBundle of the certificate it serves) once it is ready to answer, and again whenever the
 * policies or the certificate change. Applied with the Deployment instead, Fail-routed webhooks would
 * send every matching request to a Service with no ready endpoint, or with no caBundle yet, and fail
 * it until the first replica is ready (for ever, if cert-manager is missing).
 *
 * The configurations are named as `celgate manifests --service S --namespace NS` names them. When one
 * exists it is updated (a `resourceVersion` precondition, read again after a 409 Conflict), keeping
 * its other metadata (kubectl's annotations, labels others added); when it does not, it is created.
 * A kind the policies need no webhook of keeps an empty `webhooks` list rather than being deleted, so
 * the RBAC can stay at get and update of the two names (deploy/ ships both, empty). Equal content is
 * not written: an unchanged policy set makes no write.
 *
 * On shutdown the configurations are left as they are. Gatekeeper does the same (its configurations
 * are part of its install, deleted only by its chart's pre-delete hook); Kyverno deletes its own when
 * a replica terminates. One replica's SIGTERM in a rollout or a drain must not take the webhooks from
 * the replicas still serving, and only the cluster knows which replica is the last. Uninstalling
 * deletes them with the rest of deploy/ (README says in which order).
 *
 * A failed write is one log line and a metric, and is retried with a backoff until it succeeds or a
 * newer content replaces it. Writes are serialised: a reload during a write waits for it, and only
 * the newest content is written.
 */
import { compareWebhookConfigurations } from "../manifests/drift.ts";
import {
  readWebhookConfiguration,
  WEBHOOK_API_VERSION,
  WEBHOOK_KINDS,
  type WebhookConfiguration,
  type WebhookKind,
} from "../manifests/webhook-config.ts";
import type { ApiClient, ApiResponse } from "./client.ts";
import type { ClusterLog } from "./observe.ts";

/** What a write did; `failed` is counted and retried. */
export type RegistrationAction = "created" | "updated" | "unchanged" | "failed";

export interface RegistrationObserver {
  registered(kind: WebhookKind, action: RegistrationAction): void;
}

export interface RegistrarOptions {
  readonly log: ClusterLog;
  /** The labels of a configuration with no webhooks (the others carry webhooks.ts's). */
  readonly labels: Readonly<Record<string, string>>;
  readonly observer?: RegistrationObserver;
  /** The first retry after a failure; doubled up to `maxRetryMs`. Defaults 1 s and 60 s. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
}

const PLURAL: Readonly<Record<WebhookKind, string>> = {
  ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
  MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
};

const COLLECTION = "/apis/admissionregistration.k8s.io/v1";

type Doc = Record<string, unknown>;

function metadataOf(doc: Doc): Record<string, unknown> {
  const m = doc.metadata;
  return m !== null && typeof m === "object" ? (m as Record<string, unknown>) : {};
}

function message(res: ApiResponse): string {
  const body = res.body as { message?: unknown } | undefined;
  return `HTTP ${res.status}${typeof body?.message === "string" ? `: ${body.message}` : ""}`;
}

const HERE = { file: "(cluster)", line: 1, column: 1 };

function read(doc: unknown): WebhookConfiguration | undefined {
  return readWebhookConfiguration(doc, { strict: false, locate: () => HERE }).config;
}

/**
 * The two configurations to hold for `documents` (the output of webhookManifests): each kind's
 * document, or the same name with no webhooks when the policies need none of that kind.
 */
export function wantedConfigurations(
  documents: readonly Doc[],
  name: string,
  labels: Readonly<Record<string, string>>,
): Record<WebhookKind, Doc> {
  const empty = (kind: WebhookKind): Doc => ({
    apiVersion: WEBHOOK_API_VERSION,
    kind,
    metadata: { name, labels: { ...labels } },
    webhooks: [],
  });
  const of = (kind: WebhookKind) => documents.find((d) => d.kind === kind) ?? empty(kind);
  return {
    ValidatingWebhookConfiguration: of("ValidatingWebhookConfiguration"),
    MutatingWebhookConfiguration: of("MutatingWebhookConfiguration"),
  };
}

export class WebhookRegistrar {
  private wanted: Readonly<Record<WebhookKind, Doc>> | undefined;
  /** The content the last successful pass wrote (or found). */
  private written: Readonly<Record<WebhookKind, Doc>> | undefined;
  private running: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private backoffMs: number;
  private stopped = false;

  constructor(
    private readonly client: ApiClient,
    /** The configurations' name (both kinds): webhooks.ts configurationName. */
    readonly name: string,
    private readonly options: RegistrarOptions,
  ) {
    this.backoffMs = options.retryMs ?? 1000;
  }

  /** Whether the newest content asked for is the one in the cluster. */
  get current(): boolean {
    return this.wanted !== undefined && this.written === this.wanted;
  }

  /**
   * Brings both configurations to `documents` (webhookManifests' output; other kinds in it are
   * ignored). Resolves once a pass with this content (or a newer one) has ended, written or not.
   */
  register(documents: readonly Doc[]): Promise<void> {
    this.wanted = wantedConfigurations(documents, this.name, this.options.labels);
    clearTimeout(this.retry);
    return this.drive();
  }

  /** No more writes (retries included); a write under way finishes. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
  }

  private drive(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) return this.running.then(() => this.drive());
    const wanted = this.wanted;
    if (wanted === undefined || this.written === wanted) return Promise.resolve();
    this.running = this.pass(wanted).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(wanted: Readonly<Record<WebhookKind, Doc>>): Promise<void> {
    let failed = false;
    for (const kind of WEBHOOK_KINDS) {
      const action = await this.apply(kind, wanted[kind]).catch((e: unknown) => {
        this.options.log.error(
          { event: "webhook-registration", kind, name: this.name, error: String((e as Error)?.message ?? e) },
          `could not write ${kind} ${this.name}; retrying`,
        );
        return "failed" as const;
      });
      this.options.observer?.registered(kind, action);
      if (action === "failed") failed = true;
      else if (action !== "unchanged")
        this.options.log.info(
          { event: "webhook-registration", kind, name: this.name, action },
          `${kind} ${action}`,
        );
    }
    if (!failed) {
      this.written = wanted;
      this.backoffMs = this.options.retryMs ?? 1000;
      return;
    }
    if (this.stopped || this.wanted !== wanted) return;
    this.retry = setTimeout(() => void this.drive(), this.backoffMs);
    this.retry.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, this.options.maxRetryMs ?? 60_000);
  }

  /** One configuration: created, updated (once more after a conflict), or found as wanted. */
  private async apply(kind: WebhookKind, wanted: Doc): Promise<RegistrationAction> {
    const path = `${COLLECTION}/${PLURAL[kind]}`;
    for (let attempt = 0; attempt < 2; attempt++) {
      const got = await this.client.request("GET", `${path}/${this.name}`);
      if (got.status === 404) {
        const created = await this.client.request("POST", path, wanted);
        if (created.status === 201 || created.status === 200) return "created";
        if (created.status === 409) continue;
        return this.failed(kind, "create", created);
      }
      if (got.status !== 200) return this.failed(kind, "get", got);
      const live = got.body as Doc;
      if (this.same(wanted, live)) return "unchanged";
      const liveMeta = metadataOf(live);
      const wantedMeta = metadataOf(wanted);
      const body = {
        ...wanted,
        metadata: {
          ...liveMeta,
          labels: {
            ...(liveMeta.labels as object | undefined),
            ...(wantedMeta.labels as object | undefined),
          },
        },
      };
      const updated = await this.client.request("PUT", `${path}/${this.name}`, body);
      if (updated.status === 200) return "updated";
      if (updated.status === 409) continue;
      return this.failed(kind, "update", updated);
    }
    return this.failed(kind, "update", { status: 409, body: { message: "conflict twice in a row" } });
  }

  private same(wanted: Doc, live: Doc): boolean {
    const w = read(wanted);
    const l = read(live);
    return (
      w !== undefined && l !== undefined && compareWebhookConfigurations([w], [l]).differences.length === 0
    );
  }

  private failed(kind: WebhookKind, verb: string, res: ApiResponse): RegistrationAction {
    const hint =
      res.status === 403
        ? ` (the ClusterRole must allow ${verb} on ${PLURAL[kind]} named ${this.name}; see celgate manifests --rbac --register-webhooks)`
        : "";
    this.options.log.error(
      { event: "webhook-registration", kind, name: this.name, verb, status: res.status },
      `could not ${verb} ${kind} ${this.name}: ${message(res)}${hint}; retrying`,
    );
    return "failed";
  }
}
