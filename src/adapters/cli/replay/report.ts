/**
 * `celgate replay`'s tally: counts by kind of change, grouped by policy, namespace and user, each
 * group with its first examples. Its memory is bounded whatever the number of reviews: at most
 * MAX_GROUPS keys per grouping (the rest are counted under OTHERS), EXAMPLES_PER_GROUP examples
 * per group, and PROBLEMS_KEPT problems and SKIP_REASONS skip reasons kept in full.
 */
import type { AdmissionRequest } from "../../../request/types.ts";
import type { RecordedDecision } from "../../server/recording.ts";
import { CHANGE_KINDS, type ChangeKind } from "./compare.ts";

export const MAX_GROUPS = 1000;
export const EXAMPLES_PER_GROUP = 3;
export const PROBLEMS_KEPT = 20;
const SKIP_REASONS = 50;
export const OTHERS = "(others)";

export interface Example {
  readonly where: string;
  readonly path?: string;
  readonly operation: string;
  readonly resource: string;
  readonly user: string;
  readonly changes: readonly ChangeKind[];
  readonly before: RecordedDecision;
  readonly after: RecordedDecision;
}

export interface Group {
  readonly name: string;
  /** Reviews with a change from this group, by kind (a review counts once per kind). */
  readonly changes: Record<ChangeKind, number>;
  reviews: number;
  readonly examples: Example[];
}

const GROUPINGS = ["policy", "namespace", "user"] as const;
type Grouping = (typeof GROUPINGS)[number];

const zero = (): Record<ChangeKind, number> =>
  Object.fromEntries(CHANGE_KINDS.map((k) => [k, 0])) as Record<ChangeKind, number>;

export function describeResource(r: AdmissionRequest): string {
  const meta = (r.object ?? r.oldObject)?.metadata as { generateName?: unknown } | undefined;
  const name = r.name || (typeof meta?.generateName === "string" ? `${meta.generateName}*` : "");
  return `${r.kind.kind} ${r.namespace ? `${r.namespace}/` : ""}${name}`;
}

export class ReplayTally {
  reviews = 0;
  unchanged = 0;
  changed = 0;
  readonly byKind = zero();
  skipped = 0;
  readonly skipReasons = new Map<string, number>();
  problemCount = 0;
  readonly problems: { readonly where: string; readonly message: string }[] = [];
  /** Which side the changes are measured from: the baseline set, or the recorded answers. */
  constructor(readonly against: "baseline" | "recorded") {}
  private readonly groups: Record<Grouping, Map<string, Group>> = {
    policy: new Map(),
    namespace: new Map(),
    user: new Map(),
  };

  skip(reason: string): void {
    this.skipped++;
    const key = this.skipReasons.has(reason) || this.skipReasons.size < SKIP_REASONS ? reason : OTHERS;
    this.skipReasons.set(key, (this.skipReasons.get(key) ?? 0) + 1);
  }

  problem(where: string, message: string): void {
    this.problemCount++;
    if (this.problems.length < PROBLEMS_KEPT) this.problems.push({ where, message });
  }

  /** One review replayed: unchanged, or its changes with the policies each comes from. */
  add(
    example: Example | undefined,
    request: AdmissionRequest,
    policies: ReadonlyMap<ChangeKind, readonly string[]>,
  ): void {
    this.reviews++;
    if (example === undefined) {
      this.unchanged++;
      return;
    }
    this.changed++;
    for (const k of example.changes) this.byKind[k]++;
    const keys: Record<Grouping, Map<string, ChangeKind[]>> = {
      policy: new Map(),
      namespace: new Map([[request.namespace || "(cluster)", [...example.changes]]]),
      user: new Map([[request.userInfo.username || "(none)", [...example.changes]]]),
    };
    for (const [kind, names] of policies)
      for (const n of names) keys.policy.set(n, [...(keys.policy.get(n) ?? []), kind]);
    for (const g of GROUPINGS) for (const [name, kinds] of keys[g]) this.count(g, name, kinds, example);
  }

  private count(grouping: Grouping, name: string, kinds: readonly ChangeKind[], example: Example): void {
    const map = this.groups[grouping];
    const key = map.has(name) || map.size < MAX_GROUPS ? name : OTHERS;
    let group = map.get(key);
    if (group === undefined) {
      group = { name: key, changes: zero(), reviews: 0, examples: [] };
      map.set(key, group);
    }
    group.reviews++;
    for (const k of kinds) group.changes[k]++;
    if (group.examples.length < EXAMPLES_PER_GROUP) group.examples.push(example);
  }

  /** A grouping's groups, the most changed first. */
  grouped(grouping: Grouping): Group[] {
    return [...this.groups[grouping].values()].sort(
      (a, b) => b.reviews - a.reviews || (a.name < b.name ? -1 : 1),
    );
  }

  toJSON(): Record<string, unknown> {
    return {
      against: this.against,
      reviews: this.reviews,
      unchanged: this.unchanged,
      changed: this.changed,
      changes: this.byKind,
      skipped: this.skipped,
      skipReasons: Object.fromEntries(this.skipReasons),
      problems: { count: this.problemCount, first: this.problems },
      byPolicy: this.grouped("policy"),
      byNamespace: this.grouped("namespace"),
      byUser: this.grouped("user"),
    };
  }
}

const LABELS: Readonly<Record<ChangeKind, string>> = {
  "newly-denied": "newly denied",
  "newly-allowed": "newly allowed",
  "denial-changed": "denied differently",
  warnings: "warnings changed",
  "audit-annotations": "audit annotations changed",
  patch: "patch changed",
};

function counts(changes: Record<ChangeKind, number>): string {
  return CHANGE_KINDS.filter((k) => changes[k] > 0)
    .map((k) => `${LABELS[k]} ${changes[k]}`)
    .join(", ");
}

function verdict(d: RecordedDecision): string {
  if (d.allowed) return "allowed";
  return `denied (${d.code ?? ""}${d.message ? `: ${d.message}` : ""})`;
}

/** The lines that show what changed in one example. */
export function exampleLines(e: Example): string[] {
  const head = `${e.resource} (${e.operation} by ${e.user || "(none)"}${e.path ? ` on ${e.path}` : ""}) at ${e.where}`;
  const lines = [head];
  for (const k of e.changes) {
    if (k === "newly-denied" || k === "newly-allowed" || k === "denial-changed")
      lines.push(`  ${verdict(e.before)} -> ${verdict(e.after)}`);
    else if (k === "warnings")
      lines.push(`  warnings ${JSON.stringify(e.before.warnings)} -> ${JSON.stringify(e.after.warnings)}`);
    else if (k === "audit-annotations")
      lines.push(
        `  audit annotations ${JSON.stringify(e.before.auditAnnotations)} -> ${JSON.stringify(e.after.auditAnnotations)}`,
      );
    else lines.push(`  patch ${JSON.stringify(e.before.patch)} -> ${JSON.stringify(e.after.patch)}`);
  }
  return lines;
}

export function formatText(t: ReplayTally): string {
  const out: string[] = [
    `replayed ${t.reviews} reviews against the ${t.against === "baseline" ? "baseline set" : "recorded answers"}: ${t.unchanged} unchanged, ${t.changed} changed; ${t.skipped} skipped, ${t.problemCount} unreadable`,
  ];
  for (const k of CHANGE_KINDS) if (t.byKind[k] > 0) out.push(`  ${LABELS[k].padEnd(26)} ${t.byKind[k]}`);
  for (const g of GROUPINGS) {
    const groups = t.grouped(g);
    if (groups.length === 0) continue;
    out.push("", `by ${g}:`);
    for (const group of groups) {
      out.push(`  ${group.name}: ${counts(group.changes)}`);
      for (const e of group.examples.slice(0, g === "policy" ? EXAMPLES_PER_GROUP : 1))
        out.push(...exampleLines(e).map((l) => `    ${l}`));
    }
  }
  if (t.skipped > 0) {
    out.push("", "skipped:");
    for (const [reason, n] of t.skipReasons) out.push(`  ${n} ${reason}`);
  }
  if (t.problemCount > 0) {
    out.push(
      "",
      `unreadable (${t.problemCount}${t.problemCount > t.problems.length ? `, the first ${t.problems.length}` : ""}):`,
    );
    for (const p of t.problems) out.push(`  ${p.where}: ${p.message}`);
  }
  return `${out.join("\n")}\n`;
}

const xml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * JUnit XML for CI: a test case per policy (failed when the review changes it brings are of the
 * kinds that fail the run), one for the reviews that could not be read, and one for the whole run.
 */
export function formatJunit(t: ReplayTally, failOn: ReadonlySet<ChangeKind>): string {
  const cases: string[] = [];
  let failures = 0;
  const failing = (changes: Record<ChangeKind, number>) =>
    CHANGE_KINDS.some((k) => failOn.has(k) && changes[k] > 0);
  for (const group of t.grouped("policy")) {
    const name = xml(group.name);
    if (!failing(group.changes)) {
      cases.push(`    <testcase classname="celgate.replay.policy" name="${name}"/>`);
      continue;
    }
    failures++;
    const body = group.examples.flatMap(exampleLines).join("\n");
    cases.push(
      `    <testcase classname="celgate.replay.policy" name="${name}">\n      <failure message="${xml(counts(group.changes))}">${xml(body)}</failure>\n    </testcase>`,
    );
  }
  const overall = failing(t.byKind);
  cases.push(
    overall
      ? `    <testcase classname="celgate.replay" name="replay">\n      <failure message="${xml(`${t.changed} of ${t.reviews} reviews changed: ${counts(t.byKind)}`)}"/>\n    </testcase>`
      : `    <testcase classname="celgate.replay" name="replay"/>`,
  );
  if (overall) failures++;
  let errors = 0;
  if (t.problemCount > 0) {
    errors = 1;
    const body = t.problems.map((p) => `${p.where}: ${p.message}`).join("\n");
    cases.push(
      `    <testcase classname="celgate.replay" name="unreadable reviews">\n      <error message="${t.problemCount} reviews could not be read">${xml(body)}</error>\n    </testcase>`,
    );
  }
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="celgate replay" tests="${cases.length}" failures="${failures}" errors="${errors}">`,
    `  <testsuite name="celgate replay" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="0">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
