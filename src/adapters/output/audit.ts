/**
 * What `celgate audit` reports about existing objects: a count per policy and binding of each
 * result (pass, fail, warn, error, skip), the findings (every result but pass and skip), and
 * policy reports in the format Kyverno and Kubewarden users read — `wgpolicyk8s.io/v1alpha2`
 * PolicyReport (one per namespace) and ClusterPolicyReport (cluster-scoped objects) — or the same
 * results as `openreports.io/v1alpha1` Report and ClusterReport.
 *
 * How a policy result becomes a report result:
 * - skip (not selected) → skip; error (failurePolicy had to decide) → error;
 * - a failed validation whose binding only warns (validationActions [Warn]) → warn, else fail;
 * - a mutating policy that would change the object → warn, with the JSON Patch it would apply in
 *   the result's `properties.patch`; one that would leave it as it is → pass.
 *
 * Memory: the counts are a fixed size; findings grow with the problems found; reports hold one
 * small entry per result that is not a skip, which is what the format asks for.
 */
import { stringify as yamlStringify } from "yaml";
import type { ResourceRef } from "../../engine/request.ts";
import type { PolicyResult } from "../../engine/types.ts";
import { stringifyJson } from "../../request/json-deep.ts";

export type AuditResult = "pass" | "fail" | "warn" | "error" | "skip";
export const AUDIT_RESULTS: readonly AuditResult[] = ["pass", "fail", "warn", "error", "skip"];

export interface AuditedObject {
  readonly ref: ResourceRef;
  readonly uid?: string;
}

export interface Finding {
  readonly resource: ResourceRef;
  readonly policy: string;
  readonly binding: string | null;
  readonly result: AuditResult;
  readonly message: string;
  readonly patch?: unknown;
}

interface ReportEntry {
  readonly policy: string;
  readonly rule: string;
  readonly result: AuditResult;
  readonly message: string;
  readonly object: number;
  readonly patch?: string;
}

export type ReportApi = "wgpolicyk8s.io/v1alpha2" | "openreports.io/v1alpha1";

export function auditResult(r: PolicyResult): AuditResult {
  if (r.outcome === "skip" || r.outcome === "error") return r.outcome;
  if (r.policyKind === "MutatingAdmissionPolicy") return r.patch && r.patch.length > 0 ? "warn" : "pass";
  if (r.outcome === "pass") return "pass";
  const actions = r.violations.map((v) => v.action);
  return actions.length > 0 && actions.every((a) => a === "Warn") ? "warn" : "fail";
}

function messageOf(r: PolicyResult): string {
  if (r.outcome === "error" || r.outcome === "skip") return r.reason ?? "";
  if (r.policyKind === "MutatingAdmissionPolicy")
    return r.patch && r.patch.length > 0 ? `would patch ${r.patch.length} field(s)` : "no change";
  return r.violations.map((v) => v.message).join("; ");
}

const SEVERITY: Readonly<Record<AuditResult, number>> = { skip: 0, pass: 1, warn: 2, fail: 3, error: 4 };

/**
 * One result per policy, binding and param: a mutating policy that is invoked again (its
 * reinvocationPolicy) has a result per invocation, and the report keeps the most severe.
 */
function onePerBinding(results: readonly PolicyResult[]): [PolicyResult, AuditResult][] {
  const kept = new Map<string, [PolicyResult, AuditResult]>();
  for (const r of results) {
    const key = `${r.policyKind}\u0000${r.policy}\u0000${r.binding ?? ""}\u0000${r.param ?? ""}`;
    const result = auditResult(r);
    const before = kept.get(key);
    if (!before || SEVERITY[result] > SEVERITY[before[1]]) kept.set(key, [r, result]);
  }
  return [...kept.values()];
}

export interface AuditOptions {
  /** Keep every result for policy reports (memory grows with objects × policies). */
  readonly reports?: boolean;
  /** Keep the findings (every result but pass and skip) for JSON and YAML output. */
  readonly findings?: boolean;
}

export class AuditTally {
  /** `policy\u0000binding` → counts in AUDIT_RESULTS order. */
  private readonly counts = new Map<string, number[]>();
  readonly findings: Finding[] = [];
  private readonly objects: AuditedObject[] = [];
  private readonly entries: ReportEntry[] = [];
  objectCount = 0;

  constructor(private readonly options: AuditOptions = {}) {}

  add(object: AuditedObject, results: readonly PolicyResult[]): void {
    this.objectCount++;
    let index = -1;
    for (const [r, result] of onePerBinding(results)) {
      const binding = r.binding ?? null;
      const key = `${r.policy}\u0000${binding ?? ""}`;
      let c = this.counts.get(key);
      if (!c) {
        c = [0, 0, 0, 0, 0];
        this.counts.set(key, c);
      }
      c[AUDIT_RESULTS.indexOf(result)]!++;
      const patch =
        r.policyKind === "MutatingAdmissionPolicy" && r.patch && r.patch.length > 0 ? r.patch : undefined;
      if (this.options.findings && result !== "pass" && result !== "skip")
        this.findings.push({
          resource: object.ref,
          policy: r.policy,
          binding,
          result,
          message: messageOf(r),
          ...(patch ? { patch } : {}),
        });
      if (this.options.reports && result !== "skip") {
        if (index === -1) {
          index = this.objects.length;
          this.objects.push(object);
        }
        this.entries.push({
          policy: r.policy,
          rule: binding ?? "",
          result,
          message: messageOf(r),
          object: index,
          ...(patch ? { patch: stringifyJson(patch) } : {}),
        });
      }
    }
  }

  /** One row per policy and binding, sorted. */
  summary(): { policy: string; binding: string | null; counts: Record<AuditResult, number> }[] {
    return [...this.counts.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, c]) => {
        const [policy = "", binding = ""] = key.split("\u0000");
        const counts = Object.fromEntries(AUDIT_RESULTS.map((r, i) => [r, c[i] ?? 0])) as Record<
          AuditResult,
          number
        >;
        return { policy, binding: binding === "" ? null : binding, counts };
      });
  }

  /** Whether any result is a fail or an error. */
  failed(): boolean {
    for (const c of this.counts.values()) if ((c[1] ?? 0) > 0 || (c[3] ?? 0) > 0) return true;
    return false;
  }

  table(): string {
    const rows = this.summary().map((s) => [
      s.policy,
      s.binding ?? "(none)*",
      ...AUDIT_RESULTS.map((r) => String(s.counts[r])),
    ]);
    const header = ["POLICY", "BINDING", "PASS", "FAIL", "WARN", "ERROR", "SKIP"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const line = (cells: readonly string[]) =>
      cells
        .map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
        .join("  ")
        .trimEnd();
    const unbound = rows.some((r) => r[1] === "(none)*")
      ? "* no binding: evaluated as if bound with validationActions [Deny]\n"
      : "";
    return `${[line(header), ...rows.map(line)].join("\n")}\n${this.objectCount} objects audited\n${unbound}`;
  }

  /** The summary and findings as data, for `-o json` and `-o yaml`. */
  data(): Record<string, unknown> {
    return { objects: this.objectCount, summary: this.summary(), findings: this.findings };
  }

  json(): string {
    return `${stringifyJson(this.data(), 2)}\n`;
  }

  yaml(): string {
    return yamlStringify(this.data());
  }

  /**
   * The reports: one per namespace that has results, plus one cluster-wide report for
   * cluster-scoped objects, each with its summary. `now` is the results' timestamp.
   */
  reports(api: ReportApi, now: Date): Record<string, unknown>[] {
    const seconds = Math.floor(now.getTime() / 1000);
    const byNamespace = new Map<string, ReportEntry[]>();
    for (const e of this.entries) {
      const ns = this.objects[e.object]?.ref.namespace ?? "";
      let list = byNamespace.get(ns);
      if (!list) {
        list = [];
        byNamespace.set(ns, list);
      }
      list.push(e);
    }
    const [namespacedKind, clusterKind] =
      api === "openreports.io/v1alpha1"
        ? ["Report", "ClusterReport"]
        : ["PolicyReport", "ClusterPolicyReport"];
    const out: Record<string, unknown>[] = [];
    for (const ns of [...byNamespace.keys()].sort()) {
      const entries = byNamespace.get(ns) ?? [];
      const summary: Record<AuditResult, number> = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
      for (const e of entries) summary[e.result]++;
      out.push({
        apiVersion: api,
        kind: ns === "" ? clusterKind : namespacedKind,
        metadata: {
          name: "celgate-audit",
          ...(ns === "" ? {} : { namespace: ns }),
          labels: { "app.kubernetes.io/managed-by": "celgate" },
        },
        // OpenReports names the producer on the report too; wgpolicyk8s.io only on each result.
        ...(api === "openreports.io/v1alpha1" ? { source: "celgate" } : {}),
        summary,
        results: entries.map((e) => {
          const o = this.objects[e.object]!;
          return {
            source: "celgate",
            policy: e.policy,
            ...(e.rule !== "" ? { rule: e.rule } : {}),
            result: e.result,
            scored: true,
            message: e.message,
            timestamp: { seconds, nanos: 0 },
            resources: [
              {
                apiVersion: o.ref.apiVersion,
                kind: o.ref.kind,
                name: o.ref.name,
                ...(o.ref.namespace ? { namespace: o.ref.namespace } : {}),
                ...(o.uid ? { uid: o.uid } : {}),
              },
            ],
            ...(e.patch ? { properties: { patch: e.patch } } : {}),
          };
        }),
      });
    }
    return out;
  }
}
