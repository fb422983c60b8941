/**
 * A stand-in for the API server's webhook dispatch, for end-to-end tests of `celgate manifests`
 * against the real server: it reads the generated webhook configurations and, for one request,
 * calls the webhooks that match as the API server would, over real TLS, with real AdmissionReview
 * bodies. Written from the Kubernetes documentation ("Dynamic Admission Control", seeds/000) and
 * the dispatchers (k8s.io/apiserver/pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go,
 * predicates/rules/rules.go, predicates/namespace, predicates/object), not from celgate's matcher:
 *
 * - a webhook is called when one of its rules matches (operation, group, version,
 *   resource[/subresource], scope), its namespaceSelector matches the namespace's labels (a
 *   Namespace is matched on its own labels; other cluster-scoped objects always pass), its
 *   objectSelector matches the object's or the old object's labels, and all its matchConditions
 *   are true; a condition that errors applies the webhook's failurePolicy;
 * - mutating webhooks are called in order, configurations sorted by name, each seeing the previous
 *   patch applied; when one changed the object, the IfNeeded webhooks called before it run again once;
 * - validating webhooks are called in parallel;
 * - a call that fails (no connection, not a 200 with an AdmissionReview) applies failurePolicy:
 *   Fail rejects the request, Ignore skips the webhook.
 *
 * matchConditions are evaluated with celgate's CEL (there is no cel-go here); everything else is
 * this file's own.
 */
import fastJsonPatch from "fast-json-patch";
import { evaluate } from "../../../src/cel/index.ts";
import { send } from "../../helpers/https.ts";

type Json = Record<string, unknown>;

interface Rule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope?: string;
}
interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
export interface Hook {
  name: string;
  clientConfig: { service: { path: string } };
  rules: Rule[];
  failurePolicy: "Fail" | "Ignore";
  namespaceSelector?: Selector;
  objectSelector?: Selector;
  matchConditions?: { name: string; expression: string }[];
  timeoutSeconds: number;
  reinvocationPolicy?: string;
}
interface Configuration {
  kind: string;
  metadata: { name: string };
  webhooks: Hook[];
}

export interface ClusterRequest {
  readonly operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subResource?: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly namespaced: boolean;
  readonly object: Json | null;
  readonly oldObject?: Json | null;
  readonly userInfo?: { username: string; groups: string[] };
}

export interface ClusterAnswer {
  readonly allowed: boolean;
  readonly message?: string;
  readonly warnings: readonly string[];
  readonly object: Json | null;
  /** The webhooks called, in order, with the outcome of each call. */
  readonly calls: readonly string[];
  /** Each answered call's audit annotation keys (`policy/key`), which say what it evaluated. */
  readonly audits: readonly { readonly webhook: string; readonly keys: readonly string[] }[];
}

function selects(selector: Selector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  if (labels === undefined) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    const ok =
      e.operator === "In"
        ? has && (e.values ?? []).includes(value as string)
        : e.operator === "NotIn"
          ? !has || !(e.values ?? []).includes(value as string)
          : e.operator === "Exists"
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

function listMatches(list: readonly string[], value: string): boolean {
  return list.includes("*") || list.includes(value);
}

function ruleMatches(rule: Rule, r: ClusterRequest): boolean {
  if (!listMatches(rule.operations, r.operation)) return false;
  if (!listMatches(rule.apiGroups, r.group) || !listMatches(rule.apiVersions, r.version)) return false;
  const scope = rule.scope ?? "*";
  if (scope === "Cluster" && r.namespaced) return false;
  if (scope === "Namespaced" && !r.namespaced) return false;
  return rule.resources.some((p) => {
    const [res, sub] = p.split("/", 2) as [string, string | undefined];
    const resOk = res === "*" || res === r.resource;
    const subOk = sub === undefined ? !r.subResource : sub === "*" || sub === (r.subResource ?? "");
    return resOk && subOk;
  });
}

function labelsOf(o: Json | null | undefined): Record<string, string> | undefined {
  if (!o) return undefined;
  const meta = o.metadata as { labels?: Record<string, string> } | undefined;
  return meta?.labels ?? {};
}

function review(r: ClusterRequest, object: Json | null, uid: string): Json {
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const gvr = { group: r.group, version: r.version, resource: r.resource };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: gvk,
      resource: gvr,
      ...(r.subResource ? { subResource: r.subResource } : {}),
      requestKind: gvk,
      requestResource: gvr,
      name: r.name,
      namespace: r.namespace,
      operation: r.operation,
      userInfo: r.userInfo ?? { username: "alice", groups: ["system:authenticated"] },
      object,
      oldObject: r.oldObject ?? null,
      dryRun: false,
      options: null,
    },
  };
}

export class ApiServer {
  private readonly validating: Hook[];
  private readonly mutating: Hook[];
  private uid = 0;

  constructor(
    documents: readonly Record<string, unknown>[],
    private readonly endpoint: { port: number; ca: string },
    /** Labels of the namespaces that exist; every one also has kubernetes.io/metadata.name. */
    private readonly namespaces: Readonly<Record<string, Record<string, string>>> = {},
  ) {
    const configs = documents
      .filter((d) => String(d.kind).endsWith("WebhookConfiguration"))
      .map((d) => d as unknown as Configuration)
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    this.validating = configs.filter((c) => c.kind.startsWith("Validating")).flatMap((c) => c.webhooks);
    this.mutating = configs.filter((c) => c.kind.startsWith("Mutating")).flatMap((c) => c.webhooks);
  }

  private namespaceLabels(r: ClusterRequest): Record<string, string> | undefined {
    if (r.kind === "Namespace" && r.group === "") return labelsOf(r.object ?? r.oldObject);
    if (!r.namespaced) return undefined;
    return { ...this.namespaces[r.namespace], "kubernetes.io/metadata.name": r.namespace };
  }

  /** Whether the hook is called: "call", "skip", or "error: ..." when a matchCondition failed. */
  private decide(h: Hook, r: ClusterRequest, object: Json | null): string {
    if (!h.rules.some((rule) => ruleMatches(rule, r))) return "skip";
    const nsLabels = this.namespaceLabels(r);
    if (nsLabels !== undefined && !selects(h.namespaceSelector, nsLabels)) return "skip";
    if (
      h.objectSelector &&
      !selects(h.objectSelector, labelsOf(object)) &&
      !selects(h.objectSelector, labelsOf(r.oldObject))
    )
      return "skip";
    let failed: string | undefined;
    for (const c of h.matchConditions ?? []) {
      const request = (review(r, object, "match") as { request: Json }).request;
      const v = evaluate(c.expression, { object, oldObject: r.oldObject ?? null, request });
      if (!v.ok) failed ??= `${c.name}: ${v.error}`;
      else if (v.value === false) return "skip";
    }
    return failed ? `error: ${failed}` : "call";
  }

  private async call(h: Hook, r: ClusterRequest, object: Json | null): Promise<Json | string> {
    try {
      const res = await send({
        port: this.endpoint.port,
        ca: this.endpoint.ca,
        path: `${h.clientConfig.service.path}?timeout=${h.timeoutSeconds}s`,
        body: review(r, object, `uid-${++this.uid}`),
        timeoutMs: h.timeoutSeconds * 1000,
      });
      if (res.status !== 200) return `HTTP ${res.status}`;
      const body = JSON.parse(res.body) as { response?: Json };
      return body.response ?? "no response";
    } catch (e) {
      return (e as Error).message;
    }
  }

  /** Admits one request through the webhooks, as the API server would. */
  async admit(r: ClusterRequest): Promise<ClusterAnswer> {
    const calls: string[] = [];
    const warnings: string[] = [];
    const audits: { webhook: string; keys: string[] }[] = [];
    const answered = (h: Hook, answer: Json) => {
      calls.push(`${h.name}: called`);
      audits.push({
        webhook: h.name,
        keys: Object.keys((answer.auditAnnotations as Json | undefined) ?? {}).sort(),
      });
      warnings.push(...((answer.warnings as string[] | undefined) ?? []));
    };
    let object = r.object === null ? null : structuredClone(r.object);
    const reject = (message: string): ClusterAnswer => ({
      allowed: false,
      message,
      warnings,
      object,
      calls,
      audits,
    });

    // Mutating phase, with one reinvocation of the IfNeeded webhooks called before a change.
    const runMutating = async (
      hooks: readonly Hook[],
    ): Promise<{ denied?: string; changedAfter: Set<number> }> => {
      const changedAfter = new Set<number>();
      for (const [i, h] of hooks.entries()) {
        const d = this.decide(h, r, object);
        if (d === "skip") continue;
        if (d.startsWith("error")) {
          calls.push(`${h.name}: ${d}`);
          if (h.failurePolicy === "Fail") return { denied: `${h.name}: ${d}`, changedAfter };
          continue;
        }
        const answer = await this.call(h, r, object);
        if (typeof answer === "string") {
          calls.push(`${h.name}: failed (${answer})`);
          if (h.failurePolicy === "Fail")
            return { denied: `failed calling webhook ${h.name}: ${answer}`, changedAfter };
          continue;
        }
        answered(h, answer);
        if (answer.allowed !== true)
          return {
            denied: String((answer.status as { message?: string } | undefined)?.message),
            changedAfter,
          };
        if (typeof answer.patch === "string" && object !== null) {
          const ops = JSON.parse(
            Buffer.from(answer.patch, "base64").toString("utf8"),
          ) as fastJsonPatch.Operation[];
          if (ops.length > 0) {
            object = fastJsonPatch.applyPatch(object, ops, true, false).newDocument;
            changedAfter.add(i);
          }
        }
      }
      return { changedAfter };
    };
    const first = await runMutating(this.mutating);
    if (first.denied !== undefined) return reject(first.denied);
    const lastChange = Math.max(-1, ...first.changedAfter);
    const again = this.mutating.filter((h, i) => h.reinvocationPolicy === "IfNeeded" && i < lastChange);
    if (again.length > 0) {
      const second = await runMutating(again);
      if (second.denied !== undefined) return reject(second.denied);
    }

    // Validating phase: every matching webhook at once; any denial or Fail error rejects.
    const answers = await Promise.all(
      this.validating.map(async (h) => {
        const d = this.decide(h, r, object);
        if (d === "skip") return undefined;
        if (d.startsWith("error")) return { h, outcome: d };
        return { h, outcome: await this.call(h, r, object) };
      }),
    );
    let denied: string | undefined;
    for (const a of answers) {
      if (!a) continue;
      if (typeof a.outcome === "string") {
        calls.push(`${a.h.name}: failed (${a.outcome})`);
        if (a.h.failurePolicy === "Fail") denied ??= `failed calling webhook ${a.h.name}: ${a.outcome}`;
        continue;
      }
      answered(a.h, a.outcome);
      if (a.outcome.allowed !== true)
        denied ??= String((a.outcome.status as { message?: string } | undefined)?.message);
    }
    if (denied !== undefined) return reject(denied);
    return { allowed: true, warnings, object, calls, audits };
  }
}
