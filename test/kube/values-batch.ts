/**
 * The Values fuzzer's batches: a ValidatingAdmissionPolicy holding many generated expressions, the
 * request that evaluates them, and celgate's evaluation of the same policy on the same request.
 *
 * How the API server gives values and errors back (read from staging/src/k8s.io/apiserver/pkg/
 * admission/plugin/policy/validating/, validator.go and dispatcher.go):
 * - Each expression is a variable `g<j>`. An audit annotation `g<j>` renders it (values-render.ts);
 *   every published audit annotation is recorded in the audit event as `<policy>/<key>`, one per
 *   key (the validation_failure annotation records only the first failure of a request, so it
 *   cannot carry a batch). An annotation whose expression fails is not published; under
 *   failurePolicy Fail it denies the request instead.
 * - A validation `[variables.g<j>] != []` is true whenever the variable evaluates, and fails with
 *   the variable's error otherwise: under failurePolicy Fail that is a denying decision, which a
 *   binding with validationActions [Warn] turns into a warning ("Validation failed for
 *   ValidatingAdmissionPolicy '<p>' with binding '<b>': expression '...' resulted in error: ...").
 *   Warnings come back in the response's headers; the API server's recorder
 *   (endpoints/filters/warning.go) keeps 4 Ki runes of them and then truncates, which
 *   `recordWarnings` applies to celgate's warnings too.
 * - A policy takes at most 20 audit annotations (admissionregistration validation.go
 *   maxAuditAnnotations), so a batch is one policy of up to 20 expressions, and the bindings of a
 *   group of batches select one label value (objectSelector): a request evaluates one group.
 * - The validation `false` with the message `ready` warns once the policy is in force.
 */
import { stringify } from "yaml";
import { compilePolicySet } from "../../src/compile/policy.ts";
import { contextFromSet } from "../../src/engine/context.ts";
import { decide } from "../../src/engine/decision.ts";
import type { AdmissionDecision } from "../../src/engine/types.ts";
import { validate } from "../../src/engine/validating.ts";
import { parsePolicyText } from "../../src/policy/parse.ts";
import type { AdmissionRequest } from "../../src/request/types.ts";
import type { KubeManifest } from "../helpers/kube-objects.ts";
import { CORPUS_VARIABLES } from "./corpus.ts";
import { renderExpression } from "./values-render.ts";

export const BATCH_LABEL = "celgate-values";
/** The message of the validation that says a policy is in force. */
export const READY = "ready";
/** The most expressions a batch holds: one per audit annotation. */
export const PER_POLICY = 20;
export const PARAMS_NAME = "values-params";
const NAMESPACE = "default";

/** The param object every binding refers to, created for real once. */
export const PARAMS: KubeManifest = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: PARAMS_NAME, namespace: NAMESPACE },
  data: { p1: "from-params", p2: "12345" },
};

/** The Namespace as celgate needs it to build namespaceObject; the API server has its own. */
const NAMESPACE_OBJECT: KubeManifest = { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } };

export const ADMIN_USER = { username: "celgate-admin", groups: ["system:masters", "system:authenticated"] };

export interface Batch {
  /** The policy's and binding's name. */
  readonly name: string;
  /** The label value the binding selects, the group's name. */
  readonly group: string;
  readonly expressions: readonly string[];
}

/** The index of expression `j`'s variable in spec.variables. */
export function variableIndex(j: number): number {
  return CORPUS_VARIABLES.length + j;
}

/** The validation that fails with expression `j`'s error, and nothing else. */
export function errorProbe(j: number): string {
  return `[variables.g${j}] != []`;
}

/** Whether warning `w` is batch `policy`'s, about expression `j` (or, without `j`, its ready warning). */
export function warningOf(w: string, policy: string, j?: number): boolean {
  const head = `Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${policy}': `;
  if (!w.startsWith(head)) return false;
  return j === undefined ? w === `${head}${READY}` : w.startsWith(`${head}expression '${errorProbe(j)}'`);
}

export function batchPolicy(batch: Batch): KubeManifest[] {
  const policy: KubeManifest = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: batch.name },
    spec: {
      failurePolicy: "Fail",
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] },
        ],
      },
      variables: [
        ...CORPUS_VARIABLES.map(([n, e]) => ({ name: n, expression: e })),
        ...batch.expressions.map((e, j) => ({ name: `g${j}`, expression: e })),
      ],
      validations: [
        { expression: "false", message: READY },
        ...batch.expressions.map((_, j) => ({ expression: errorProbe(j) })),
      ],
      auditAnnotations: batch.expressions.map((_, j) => ({
        key: `g${j}`,
        valueExpression: renderExpression(`variables.g${j}`),
      })),
    },
  };
  const binding: KubeManifest = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: batch.name },
    spec: {
      policyName: batch.name,
      validationActions: ["Warn"],
      paramRef: { name: PARAMS_NAME, namespace: NAMESPACE, parameterNotFoundAction: "Deny" },
      matchResources: { objectSelector: { matchLabels: { [BATCH_LABEL]: batch.group } } },
    },
  };
  return [policy, binding];
}

/** The ConfigMap a group's request creates (with server-side dry run). */
export function groupObject(group: string, attempt: number): KubeManifest {
  const metadata = {
    name: `${group}-${attempt}`,
    namespace: NAMESPACE,
    labels: { [BATCH_LABEL]: group, app: "web" },
  };
  return { apiVersion: "v1", kind: "ConfigMap", metadata, data: { k1: "hello", k2: "a,b,c", num: "42" } };
}

export function yamlOf(docs: readonly KubeManifest[]): string {
  return docs.map((d) => stringify(d, { lineWidth: 0 })).join("---\n");
}

/** celgate's refusals of a batch's policy: the indexes of the expressions whose variable it refuses, with the text; or a refusal elsewhere. */
export function celgateRefusals(
  batch: Batch,
  release: string,
): { readonly byExpression: Map<number, string>; readonly other: string[] } {
  const { set, diagnostics } = parsePolicyText(yamlOf(batchPolicy(batch)), "values.yaml");
  const compiled = compilePolicySet(set, { kubernetesVersion: release });
  const all = [...diagnostics, ...compiled.policies.flatMap((p) => p.diagnostics)].filter(
    (d) => d.severity === "error",
  );
  const byExpression = new Map<number, string>();
  const other: string[] = [];
  for (const d of all) {
    const m = /^spec\.variables\[(\d+)\]\.expression$/.exec(d.path ?? "");
    const j = m ? Number(m[1]) - CORPUS_VARIABLES.length : -1;
    if (j >= 0) byExpression.set(j, `${byExpression.get(j) ?? ""}${d.message}\n`);
    else other.push(`${d.path ?? ""}: ${d.message}`);
  }
  return { byExpression, other };
}

/** celgate's decision on a group's request, as the API server's dry run would make it. */
export function celgateDecision(
  group: string,
  batches: readonly Batch[],
  release: string,
  attempt: number,
): AdmissionDecision {
  const object = groupObject(group, attempt) as Record<string, unknown>;
  const text = yamlOf([...batches.flatMap((b) => batchPolicy(b)), PARAMS, NAMESPACE_OBJECT]);
  const { set, diagnostics } = parsePolicyText(text, "values.yaml");
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(`${group}: ${errors.map((d) => d.message).join("; ")}`);
  const compiled = compilePolicySet(set, { kubernetesVersion: release });
  const request: AdmissionRequest = {
    uid: "00000000-0000-0000-0000-000000000000",
    kind: { group: "", version: "v1", kind: "ConfigMap" },
    resource: { group: "", version: "v1", resource: "configmaps" },
    name: String((object.metadata as { name: string }).name),
    namespace: NAMESPACE,
    operation: "CREATE",
    userInfo: ADMIN_USER,
    object,
    oldObject: null,
    dryRun: true,
    options: null,
  };
  return decide(
    validate(compiled, request, contextFromSet(compiled), { deadline: performance.now() + 120_000 }),
  );
}

const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024;
const TRUNCATE_ITEM_RUNES = 256;

/**
 * The warnings a response carries for `texts` added in order: the API server's recorder
 * (staging/src/k8s.io/apiserver/pkg/endpoints/filters/warning.go) drops repeats, and once their
 * runes pass 4 Ki it cuts each to 256 runes and drops any added after the limit is reached.
 */
export function recordWarnings(texts: readonly string[]): { warnings: string[]; truncated: boolean } {
  const seen = new Set<string>();
  const ordered: string[] = [];
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  const runes = (s: string) => [...s];
  for (const text of texts) {
    if (text === "") continue;
    if (written >= TRUNCATE_AT_TOTAL_RUNES && truncating) break;
    if (seen.has(text)) continue;
    seen.add(text);
    ordered.push(text);
    let t = text;
    if (truncating && runes(t).length > TRUNCATE_ITEM_RUNES)
      t = runes(t).slice(0, TRUNCATE_ITEM_RUNES).join("");
    const n = runes(t).length;
    if (written + n <= TRUNCATE_AT_TOTAL_RUNES || truncating) {
      written += n;
      out.push(t);
      continue;
    }
    truncating = true;
    written = 0;
    out = [];
    for (const w of ordered) {
      const cut = runes(w).length > TRUNCATE_ITEM_RUNES ? runes(w).slice(0, TRUNCATE_ITEM_RUNES).join("") : w;
      written += runes(cut).length;
      out.push(cut);
    }
  }
  return { warnings: out, truncated: truncating };
}
