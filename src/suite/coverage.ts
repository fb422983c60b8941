/**
 * `celgate test --coverage`: what the suites' cases exercised of the policies they load, gathered
 * from the counters each expression's program kept (cel's ExpressionCoverage, compiled with
 * CompileOptions.coverage) into a report per policy and in total, every gap placed at file:line:col.
 *
 * A policy loaded by several suites is one policy: its counters are added up, by file, policy name
 * and expression. A point is covered when its count is above zero; the percentages count nodes and
 * branch outcomes alike.
 */
import {
  type BranchKind,
  type CoveragePoint,
  type ExpressionCoverage,
  OUTCOMES,
  renderError,
} from "../cel/index.ts";
import type { CompiledExpression, CompiledPolicy } from "../compile/types.ts";
import type { SourceLocation } from "../errors.ts";
import type { SourceMap } from "../policy/types.ts";
import type { LoadedSuite } from "./run.ts";

/** What an expression is to its policy, which names its outcomes (a validation passes or fails). */
export type ExpressionRole =
  | "matchCondition"
  | "variable"
  | "validation"
  | "messageExpression"
  | "auditAnnotation"
  | "mutation";

/** Covered out of total. */
export interface Tally {
  readonly covered: number;
  readonly total: number;
}

/** A point of an expression with its place in the file and, when not covered, what it means. */
export interface CoverageEntry {
  readonly kind: "node" | "branch";
  readonly location: SourceLocation;
  readonly hits: number;
  /** For a branch: its kind and the outcome's name (`true`, `empty`, `present`, `pass` ...). */
  readonly branch?: BranchKind;
  readonly outcome?: string;
  /** What a gap means, in words (`not evaluated`, `validation never failed`). */
  readonly label: string;
  /**
   * Whether the report lists it as a gap: a node not evaluated whose parent was (the top of what did
   * not run), a branch outcome not taken whose node ran. The rest are counted, not listed.
   */
  readonly shown: boolean;
  /** The expression's line with a caret under the point, as check's diagnostics show it. */
  readonly caret: string;
}

export interface ExpressionCoverageReport {
  readonly path: string;
  readonly role: ExpressionRole;
  readonly source: string;
  readonly location: SourceLocation;
  readonly nodes: Tally;
  readonly branches: Tally;
  readonly entries: readonly CoverageEntry[];
}

export interface PolicyCoverage {
  readonly file: string;
  readonly name: string;
  readonly kind: CompiledPolicy["kind"];
  readonly nodes: Tally;
  readonly branches: Tally;
  readonly expressions: readonly ExpressionCoverageReport[];
}

export interface CoverageReport {
  readonly policies: readonly PolicyCoverage[];
  readonly nodes: Tally;
  readonly branches: Tally;
  /** Nodes and branch outcomes covered, in percent of both (100 when there are none). */
  readonly percent: number;
}

/** The percentage a tally (or several added) covers; 100 for nothing to cover. */
export function percentOf(...tallies: readonly Tally[]): number {
  const t = sum(tallies);
  return t.total === 0 ? 100 : (100 * t.covered) / t.total;
}

function sum(tallies: readonly Tally[]): Tally {
  let covered = 0;
  let total = 0;
  for (const t of tallies) {
    covered += t.covered;
    total += t.total;
  }
  return { covered, total };
}

interface Collected {
  readonly policy: CompiledPolicy;
  readonly expressions: {
    path: string;
    role: ExpressionRole;
    source: string;
    coverage: ExpressionCoverage;
  }[];
}

/** The coverage of every policy the loaded suites hold (compiled with coverage), in load order. */
export function coverageReport(suites: readonly LoadedSuite[]): CoverageReport {
  const byPolicy = new Map<string, Collected>();
  for (const s of suites) {
    const set = s.loaded?.set;
    if (set === undefined) continue;
    for (const policy of new Set([...set.policies, ...set.unbound])) {
      const key = `${policy.policy.source.file}\u0000${policy.kind}\u0000${policy.name}`;
      const mine = byPolicy.get(key);
      const expressions = expressionsOf(policy);
      if (mine === undefined) {
        byPolicy.set(key, { policy, expressions });
        continue;
      }
      for (const e of expressions) {
        const same = mine.expressions.find((m) => m.path === e.path && m.source === e.source);
        if (same) same.coverage.add(e.coverage);
        else mine.expressions.push(e);
      }
    }
  }
  const policies = [...byPolicy.values()].map(policyCoverage);
  const nodes = sum(policies.map((p) => p.nodes));
  const branches = sum(policies.map((p) => p.branches));
  return { policies, nodes, branches, percent: percentOf(nodes, branches) };
}

/** A policy's expressions that compiled with coverage, in the order the policy writes them. */
function expressionsOf(policy: CompiledPolicy): Collected["expressions"] {
  const out: Collected["expressions"] = [];
  const add = (e: CompiledExpression | undefined, role: ExpressionRole) => {
    if (e?.coverage !== undefined) out.push({ path: e.path, role, source: e.source, coverage: e.coverage });
  };
  for (const m of policy.matchConditions) add(m.expression, "matchCondition");
  for (const v of policy.variables) add(v.expression, "variable");
  if (policy.kind === "ValidatingAdmissionPolicy") {
    for (const v of policy.validations) {
      add(v.expression, "validation");
      add(v.messageExpression, "messageExpression");
    }
    for (const a of policy.auditAnnotations) add(a.expression, "auditAnnotation");
  } else for (const m of policy.mutations) add(m.expression, "mutation");
  return out;
}

function policyCoverage(c: Collected): PolicyCoverage {
  const source = c.policy.policy.source;
  const expressions = c.expressions.map((e) => expressionReport(source, e));
  return {
    file: source.file,
    name: c.policy.name,
    kind: c.policy.kind,
    nodes: sum(expressions.map((e) => e.nodes)),
    branches: sum(expressions.map((e) => e.branches)),
    expressions,
  };
}

function expressionReport(source: SourceMap, e: Collected["expressions"][number]): ExpressionCoverageReport {
  const points = e.coverage.points();
  const rootId = e.coverage.parsed.root.id;
  const nodeHits = new Map(points.filter((p) => p.kind === "node").map((p) => [p.id, p.hits] as const));
  const entries = points.map((p) => entry(source, e, p, rootId, nodeHits));
  const tally = (kind: "node" | "branch"): Tally => {
    const of = entries.filter((x) => x.kind === kind);
    return { covered: of.filter((x) => x.hits > 0).length, total: of.length };
  };
  return {
    path: e.path,
    role: e.role,
    source: e.source,
    location: source.locate(e.path),
    nodes: tally("node"),
    branches: tally("branch"),
    entries,
  };
}

function entry(
  source: SourceMap,
  e: Collected["expressions"][number],
  p: CoveragePoint,
  rootId: number,
  nodeHits: ReadonlyMap<number, number>,
): CoverageEntry {
  const location =
    p.offset !== undefined && source.locateWithin
      ? source.locateWithin(e.path, p.offset)
      : source.locate(e.path);
  const caret = renderError(e.source, p.offset, "").split("\n").slice(1).join("\n");
  if (p.kind === "node") {
    const parentRan = p.parent === undefined || (nodeHits.get(p.parent) ?? 1) > 0;
    return {
      kind: "node",
      location,
      hits: p.hits,
      label: "not evaluated",
      shown: p.hits === 0 && parentRan,
      caret,
    };
  }
  const kind = p.branch as BranchKind;
  const outcome = outcomeName(kind, p.outcome ?? 0, p.id === rootId ? e.role : undefined);
  const ran = (nodeHits.get(p.id) ?? 1) > 0;
  return {
    kind: "branch",
    location,
    hits: p.hits,
    branch: kind,
    outcome,
    label: branchLabel(kind, outcome, p.id === rootId ? e.role : undefined),
    shown: p.hits === 0 && ran,
    caret,
  };
}

/** The root's outcome of a validation is pass or fail; every other outcome keeps its kind's name. */
function outcomeName(kind: BranchKind, outcome: 0 | 1, rootRole: ExpressionRole | undefined): string {
  const bool = kind === "result" || kind === "logic" || kind === "quantifier";
  if (bool && rootRole === "validation") return outcome === 0 ? "pass" : "fail";
  return OUTCOMES[kind][outcome];
}

/** A gap in words: what never happened. */
function branchLabel(kind: BranchKind, outcome: string, rootRole: ExpressionRole | undefined): string {
  const bool = kind === "result" || kind === "logic" || kind === "quantifier";
  if (bool && rootRole === "validation")
    return outcome === "pass" ? "validation never passed" : "validation never failed";
  if (bool && rootRole === "matchCondition") return `matchCondition never ${outcome}`;
  switch (kind) {
    case "result":
      return `never ${outcome}`;
    case "logic":
      return `never ${outcome}`;
    case "quantifier":
      return `never ${outcome}`;
    case "condition":
      return `condition never ${outcome}`;
    case "optMap":
    case "optional":
      return `optional never ${outcome}`;
    case "range":
      return `never iterated ${outcome === "empty" ? "an empty" : "a non-empty"} range`;
  }
}
