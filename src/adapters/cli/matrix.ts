/**
 * `celgate check --matrix`: each policy compiled for every Kubernetes release celgate models
 * (cel/env/releases.ts), and the oldest and newest that accept it. A release accepts a policy when
 * the policy and its bindings have no error there; one that accepts it only with warnings (an API
 * version behind a feature gate) is marked so.
 */
import { type CelExtras, PREVIEW_RELEASES, RELEASES, type Release } from "../../cel/index.ts";
import { compilePolicySet } from "../../compile/policy.ts";
import type { Diagnostic, SourceLocation } from "../../errors.ts";
import type { PolicySet } from "../../policy/types.ts";

/** What one release makes of one policy. */
export interface ReleaseVerdict {
  readonly accepted: boolean;
  /** The errors that make the release refuse it, and the warnings it has there. */
  readonly problems: readonly Diagnostic[];
}

export interface MatrixRow {
  readonly kind: string;
  readonly name: string;
  readonly location: SourceLocation;
  /** The oldest and newest releases that accept the policy; null when none does. */
  readonly oldest: Release | null;
  readonly newest: Release | null;
  readonly releases: ReadonlyMap<Release, ReleaseVerdict>;
}

/** Compiles the set once per release and sorts each diagnostic to its policy (a binding's to its policy). */
export function releaseMatrix(set: PolicySet, extras: CelExtras): MatrixRow[] {
  const bindingPolicy = new Map(
    set.bindings.map((b) => [
      `${b.kind}/${b.name}`,
      `${b.kind === "ValidatingAdmissionPolicyBinding" ? "ValidatingAdmissionPolicy" : "MutatingAdmissionPolicy"}/${b.policyName}`,
    ]),
  );
  const perRelease = RELEASES.map((release) => {
    const compiled = compilePolicySet(set, { extras, kubernetesVersion: release });
    const byPolicy = new Map<string, Diagnostic[]>();
    for (const d of compiled.diagnostics) {
      if (!d.object) continue;
      const own = `${d.object.kind}/${d.object.name}`;
      const key = bindingPolicy.get(own) ?? own;
      byPolicy.set(key, [...(byPolicy.get(key) ?? []), d]);
    }
    return { release, byPolicy };
  });
  return set.policies.map((p): MatrixRow => {
    const key = `${p.kind}/${p.name}`;
    const releases = new Map<Release, ReleaseVerdict>();
    for (const { release, byPolicy } of perRelease) {
      const problems = byPolicy.get(key) ?? [];
      releases.set(release, { accepted: !problems.some((d) => d.severity === "error"), problems });
    }
    const accepting = RELEASES.filter((r) => releases.get(r)?.accepted === true);
    return {
      kind: p.kind,
      name: p.name,
      location: p.source.locate("metadata.name"),
      oldest: accepting[0] ?? null,
      newest: accepting[accepting.length - 1] ?? null,
      releases,
    };
  });
}

function mark(v: ReleaseVerdict | undefined): string {
  if (v === undefined || !v.accepted) return "no";
  return v.problems.length > 0 ? "warn" : "ok";
}

/**
 * The table: a row per policy, a column per release (`ok`, `warn`: accepted with warnings, `no`:
 * refused), the oldest and newest accepting releases; then why, for each policy some release
 * refuses (at the newest that refuses it) or only warns about (at the newest that warns).
 */
export function formatMatrixText(rows: readonly MatrixRow[]): string {
  const head = ["POLICY", ...RELEASES, "OLDEST", "NEWEST"];
  const body = rows.map((r) => [
    `${r.kind}/${r.name}`,
    ...RELEASES.map((rel) => mark(r.releases.get(rel))),
    r.oldest ?? "-",
    r.newest ?? "-",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `${cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()}\n`;
  const out = [line(head), ...body.map(line)];
  const notes: string[] = [];
  for (const r of rows) {
    const newestFirst = [...RELEASES].reverse();
    const release =
      newestFirst.find((rel) => r.releases.get(rel)?.accepted === false) ??
      newestFirst.find((rel) => (r.releases.get(rel)?.problems.length ?? 0) > 0);
    if (release === undefined) continue;
    for (const d of r.releases.get(release)?.problems ?? []) {
      const at = d.location ? `${d.location.file}:${d.location.line}:${d.location.column}: ` : "";
      const firstLine = d.message.split("\n")[0] ?? "";
      notes.push(
        `${at}${r.kind}/${r.name}: at ${release}: ${d.severity}: ${d.path ? `${d.path}: ` : ""}${firstLine}\n`,
      );
    }
  }
  if (notes.length > 0) out.push("\n", ...notes);
  const none = rows.filter((r) => r.oldest === null).length;
  out.push(
    `${rows.length} ${rows.length === 1 ? "policy" : "policies"} over Kubernetes ${RELEASES[0]} to ${RELEASES[RELEASES.length - 1]}${none > 0 ? `, ${none} accepted by none` : ""}${PREVIEW_RELEASES.length > 0 ? ` (${PREVIEW_RELEASES.join(", ")}: a preview, from a pre-release)` : ""}\n`,
  );
  return out.join("");
}

/** The machine form: per policy, the oldest and newest accepting releases and each release's verdict. */
export function formatMatrixJson(rows: readonly MatrixRow[]): string {
  return `${JSON.stringify(
    {
      releases: RELEASES,
      policies: rows.map((r) => ({
        kind: r.kind,
        name: r.name,
        location: r.location,
        oldest: r.oldest,
        newest: r.newest,
        releases: Object.fromEntries(
          RELEASES.map((rel) => {
            const v = r.releases.get(rel);
            return [rel, { accepted: v?.accepted ?? false, problems: v?.problems ?? [] }];
          }),
        ),
      })),
    },
    null,
    2,
  )}\n`;
}
