/**
 * Differential test (issue 7): every expression of the CEL conformance suite, of the policies in
 * policies/ (against the objects of their test suites) and of a seeded generated corpus is evaluated
 * by our engine and by @bufbuild/cel's interpreter, the reference it replaced. Results must be equal
 * values (typed: 1, 1u and 1.0 differ) or errors on both sides, naming the same fault where both
 * messages name one (see fault()). Cases one engine cannot evaluate by
 * design are skipped with a counted reason. Every known disagreement is listed in KNOWN below.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { celEnv, celUint, plan, parse } from "@bufbuild/cel";
import { tests as conformance } from "@bufbuild/cel-spec/testdata/conformance.js";
import { parseAllDocuments } from "yaml";
import { toCel } from "../../../src/cel/index.ts";
import { CelError, CelMap, type CelValue, UInt } from "../../../src/cel/runtime/values.ts";
import {
  type CompiledExpression,
  type CompiledPolicy,
  compilePolicySet,
} from "../../../src/compile/policy.ts";
import type { EngineContext } from "../../../src/engine/context.ts";
import { prepare } from "../../../src/engine/prepare.ts";
import { collectParams, paramLookup } from "../../../src/engine/params.ts";
import { buildRequest, resourceRef } from "../../../src/engine/request.ts";
import type { ResourceObject } from "../../../src/policy/types.ts";
import { loadPolicyPaths } from "../../../src/sources/files.ts";
import { parseSuiteText } from "../../../src/suite/parse.ts";
import { DEFAULT_USER } from "../../../src/request/types.ts";
import type { At, JsonObject, ObjectSource } from "../../../src/suite/types.ts";
import {
  canonBuf,
  canonOurs,
  classify,
  type DiffCase,
  Differ,
  describeOutcome,
  fault,
  newTally,
  type Outcome,
  record,
  summary,
  type Tally,
  type Verdict,
} from "../../helpers/differential.ts";
import {
  collectSpecTests,
  KUBERNETES_DEPARTURES,
  specBindings,
  specSkipReason,
  Unsupported,
} from "../../helpers/cel-spec.ts";
import { generateExpressions, generatorBindings } from "../../helpers/expr-gen.ts";
import { setCodegenMode } from "../../../src/cel/configure.ts";

// Every case on generated code (plan/gen.ts); nodes without an emitter still run as closures inside it.
setCodegenMode("always");

// Observed 2,332 policy cases and 3,000 generated ones compared; the floors fail a collapse of either corpus.
const FLOOR_POLICIES = 2000;
const FLOOR_GENERATED = 2800;

// ---------------------------------------------------------------------------------------------
// Known disagreements. Each entry is an expression that shows one root cause. `wrong` says which
// engine departs from cel-go: entries where ours is wrong run as `todo` (to be fixed in src/cel,
// then removed here); entries where @bufbuild/cel is wrong assert that ours gives cel-go's answer.
// `covers` attributes corpus disagreements with the same cause to the entry, by their outcomes.

interface Known {
  readonly expr: string;
  readonly wrong: "ours" | "bufbuild";
  readonly reason: string;
  /** For `wrong: "bufbuild"`: cel-go's result, canonical (see canonOurs), or "error". */
  readonly celGo?: string;
  readonly covers?: (v: Verdict) => boolean;
}

const errorMatching = (o: Outcome, re: RegExp): boolean => o.kind === "error" && re.test(o.message);

const KNOWN: readonly Known[] = [
  {
    expr: "{0: 1, 0u: 2}[0.0]",
    wrong: "bufbuild",
    reason:
      "a map literal with a repeated key (0 and 0u are the same key) is an error in cel-go (cel-spec fields/map_value_repeat_key_heterogeneous); @bufbuild/cel keeps both",
    celGo: "error",
    covers: (v) => errorMatching(v.ours, /repeated key/) && v.theirs.kind === "value",
  },
  {
    expr: "{1.0: 'a'}",
    wrong: "bufbuild",
    reason: "double map keys are unsupported in cel-go (runtime error); @bufbuild/cel accepts them",
    celGo: "error",
    covers: (v) => errorMatching(v.ours, /unsupported key type: double/) && v.theirs.kind === "value",
  },
  {
    expr: "null in {'a': 1}",
    wrong: "bufbuild",
    reason:
      "`in` on a map with a value that cannot be a key is false in cel-go (map Find reports not found); @bufbuild/cel has no overload and fails",
    celGo: "bool(false)",
    covers: (v) =>
      errorMatching(v.theirs, /no matching overload for '@in' applied to '\(\w+, map\)'/) &&
      v.ours.kind === "value",
  },
  {
    expr: "double('x')",
    wrong: "bufbuild",
    reason:
      "cel-go parses with strconv.ParseFloat, so a malformed string is an error; @bufbuild/cel returns NaN",
    celGo: "error",
  },
  {
    expr: "int(' 4')",
    wrong: "bufbuild",
    reason: "cel-go's strconv.ParseInt rejects surrounding spaces; @bufbuild/cel accepts them",
    celGo: "error",
  },
  {
    expr: "int('0x1')",
    wrong: "bufbuild",
    reason: "cel-go's strconv.ParseInt (base 10) rejects hex; @bufbuild/cel accepts it",
    celGo: "error",
  },
  {
    expr: "uint('+5')",
    wrong: "bufbuild",
    reason: "cel-go's strconv.ParseUint rejects a sign; @bufbuild/cel accepts it",
    celGo: "error",
  },
  {
    expr: "string(timestamp('2020-01-01T00:00:00.5Z'))",
    wrong: "bufbuild",
    reason:
      "cel-go formats timestamps with RFC3339Nano (trailing zeros dropped); @bufbuild/cel always prints milliseconds",
    celGo: '"2020-01-01T00:00:00.5Z"',
  },
  {
    expr: "string(duration('-1.5s'))",
    wrong: "bufbuild",
    reason:
      "cel-go prints duration seconds with the shortest form (-1.5s); @bufbuild/cel pads to milliseconds",
    celGo: '"-1.5s"',
  },
  {
    expr: "string(1e-7)",
    wrong: "bufbuild",
    reason:
      "cel-go formats doubles with Go's %g (two-digit exponents: 1e-07); @bufbuild/cel uses JavaScript's",
    celGo: '"1e-07"',
  },
  {
    expr: "string(2.5e10)",
    wrong: "bufbuild",
    reason: "cel-go formats doubles with Go's %g (2.5e+10); @bufbuild/cel prints 25000000000",
    celGo: '"2.5e+10"',
  },
  {
    expr: "string(-0.0)",
    wrong: "bufbuild",
    reason: "Go prints negative zero as -0; @bufbuild/cel prints 0",
    celGo: '"-0"',
  },
  {
    expr: "string(double('-Infinity'))",
    wrong: "bufbuild",
    reason: "Go prints infinities as +Inf/-Inf; @bufbuild/cel prints -Infinity",
    celGo: '"-Inf"',
  },
  {
    expr: "18446744073709551615u / 1u",
    wrong: "bufbuild",
    reason:
      "uint division of values of 2^63 and more fails in @bufbuild/cel with an int overflow; cel-go divides",
    celGo: "uint(18446744073709551615)",
    covers: (v) => errorMatching(v.theirs, /int overflow during divide/) && v.ours.kind === "value",
  },
  {
    expr: "double('NaN') < 1.0",
    wrong: "bufbuild",
    reason: "cel-go (Double.Compare) makes ordering NaN an error; @bufbuild/cel returns false",
    celGo: "error",
    covers: (v) => errorMatching(v.ours, /NaN values cannot be ordered/) && v.theirs.kind === "value",
  },
  {
    expr: "'a,b,c'.split(',', 2)",
    wrong: "bufbuild",
    reason:
      "cel-go's split with a limit is Go's strings.SplitN (the last part keeps the rest); @bufbuild/cel drops it",
    celGo: '["a","b,c"]',
  },
  {
    expr: "'tacocat'.indexOf('a', 30)",
    wrong: "bufbuild",
    reason:
      "cel-go ext/strings.go since v0.22 (Kubernetes 1.32+): indexOf/lastIndexOf with an offset at or past the end find nothing (-1); @bufbuild/cel fails",
    celGo: "int(-1)",
    // Where ours goes on past the call, it may meet another error later (`... / 0`).
    covers: (v) => errorMatching(v.theirs, /^index \d+ out of bounds \[0, \d+\)$/),
  },
  {
    expr: "'abc'.replace('', '-')",
    wrong: "bufbuild",
    reason:
      "Go's strings.Replace with an empty pattern inserts between every rune (-a-b-c-); @bufbuild/cel does not",
    celGo: '"-a-b-c-"',
  },
];

function knownFor(source: string, v: Verdict): Known | undefined {
  return KNOWN.find((k) => k.expr === source) ?? KNOWN.find((k) => k.covers?.(v) === true);
}

/** Splits a corpus' disagreements into known (counted per entry) and unexplained. */
function explain(t: Tally): { unexplained: string[]; known: Map<string, number> } {
  const unexplained: string[] = [];
  const known = new Map<string, number>();
  for (const d of t.disagreements) {
    const k = knownFor(d.source, d.verdict);
    if (k) known.set(k.expr, (known.get(k.expr) ?? 0) + 1);
    else unexplained.push(`${d.key}\n  ${d.detail}`);
  }
  return { unexplained, known };
}

function report(t: { diagnostic(s: string): void }, name: string, tally: Tally, known: Map<string, number>) {
  for (const line of summary(name, tally).split("\n")) t.diagnostic(line);
  for (const [expr, n] of known) t.diagnostic(`  known disagreement ×${n}: ${expr}`);
}

// ---------------------------------------------------------------------------------------------
// The machinery itself: its comparisons must be able to fail.

test("canonical forms keep CEL types apart and ignore map order", () => {
  assert.notEqual(canonOurs(1n), canonOurs(1));
  assert.notEqual(canonOurs(1n), canonOurs(new UInt(1n)));
  assert.notEqual(canonOurs("1"), canonOurs(1n));
  assert.notEqual(canonOurs(new Uint8Array([97])), canonOurs("a"));
  assert.equal(
    canonOurs(
      new CelMap([
        ["a", 1n],
        ["b", 2n],
      ]),
    ),
    canonOurs(toCel({ b: 2, a: 1 })),
  );
  assert.equal(canonOurs(Number.NaN), canonOurs(0 / 0));
  const env = celEnv();
  const buf = (src: string) => canonBuf(plan(env, parse(src))());
  assert.equal(buf("{'b': 2, 'a': 1}"), canonOurs(toCel({ a: 1, b: 2 })));
  assert.equal(
    buf("[1u, 2.0, b'a', null, true]"),
    canonOurs([new UInt(1n), 2, new Uint8Array([97]), null, true]),
  );
  assert.equal(buf("duration('1.5s')"), "duration(1500000000)");
  assert.equal(buf("type(1u)"), "type(uint)");
  assert.equal(canonBuf(celUint(5n)), canonOurs(new UInt(5n)));
});

test("classification: equal values or two errors agree; anything else is a disagreement or a named skip", () => {
  const v = (repr: string): Outcome => ({ kind: "value", repr });
  const e = (stage: "parse" | "compile" | "eval" | "crash", message = "x", code?: string): Outcome =>
    code === undefined ? { kind: "error", stage, message } : { kind: "error", stage, message, code };
  assert.equal(classify("1", v("int(1)"), v("int(1)")).status, "agree");
  assert.equal(classify("1", v("int(1)"), v("double(1)")).status, "disagree");
  assert.equal(classify("1/0", e("eval"), e("eval", "other text")).status, "agree");
  assert.equal(classify("1/0", e("eval"), v("int(0)")).status, "disagree");
  assert.equal(classify("f()", v("int(0)"), e("crash")).status, "disagree");
  assert.equal(classify("f()", e("eval"), e("crash")).status, "disagree");
  const optional = classify("m.?a", v("optional.none"), e("parse"));
  assert.equal(optional.status, "skip");
  const unbound = classify("quantity('1')", v("q"), e("eval", "unbound function: quantity"));
  assert.deepEqual(unbound.status === "skip" && unbound.reason, "@bufbuild/cel lacks function 'quantity'");
  // A parse failure of bufbuild's on plain syntax is not excused.
  assert.equal(classify("a.b", v("int(1)"), e("parse")).status, "disagree");
  // Two evaluation errors agree unless their messages name different faults.
  const div = e("eval", "division by zero");
  assert.equal(classify("1/0", div, e("eval", "int divide by zero")).status, "agree");
  assert.equal(
    classify("m[1]", e("eval", "no such key: 1"), e("eval", "index 1 out of bounds [0, -1)")).status,
    "agree",
  );
  assert.equal(classify("a && b", div, e("eval", "found no matching overload for '_/_'")).status, "disagree");
  assert.equal(classify("a && b", e("eval", "no such key: z"), div).status, "disagree");
  assert.equal(classify("int('x')", e("eval", "cannot parse 'x'"), div).status, "agree");
});

test("fault() names what failed, whatever the wording", () => {
  assert.equal(fault("division by zero"), "division by zero");
  assert.equal(fault("int divide by zero"), "division by zero");
  assert.equal(fault("int overflow during divide by -1"), "out of range");
  assert.equal(fault("integer overflow"), "out of range");
  assert.equal(fault("timestamp out of range"), "out of range");
  assert.equal(fault("no such key: a"), "missing key or index");
  assert.equal(fault("index out of range: 9"), "missing key or index");
  assert.equal(fault("found no matching overload for '_+_' applied to '(int, string)'"), "no overload");
  assert.equal(fault("type mismatch: expected bool, got string"), "no overload");
  assert.equal(fault("invalid UTF-8"), undefined);
});

test("the differ runs both engines on the same typed bindings", () => {
  const d = new Differ();
  const bindings = { x: 2n, y: new UInt(3n), z: 1.5, m: toCel({ a: [1, 2] }) };
  const agree = (source: string) => {
    const r = d.check({ source, bindings });
    assert.equal(r.status, "agree", `${source}: ${describeOutcome(r.ours)} vs ${describeOutcome(r.theirs)}`);
    return r.ours;
  };
  assert.deepEqual(agree("x + 1"), { kind: "value", repr: "int(3)" });
  assert.deepEqual(agree("y + 1u"), { kind: "value", repr: "uint(4)" });
  assert.deepEqual(agree("m.a[1] * x"), { kind: "value", repr: "int(4)" });
  assert.equal(agree("m.b").kind, "error");
  // A policy variable is read through ours's resolver and bufbuild's `variables` map alike.
  const withVars: DiffCase = {
    source: "variables.v + 1",
    bindings: {},
    variables: new Map<string, CelValue | CelError>([["v", 41n]]),
  };
  assert.deepEqual(d.check(withVars).ours, { kind: "value", repr: "int(42)" });
  assert.equal(d.check(withVars).status, "agree");
  const failing: DiffCase = {
    source: "variables.v",
    bindings: {},
    variables: new Map<string, CelValue | CelError>([["v", new CelError("boom")]]),
  };
  assert.equal(d.check(failing).status, "agree");
  assert.equal(d.check(failing).ours.kind, "error");
});

// ---------------------------------------------------------------------------------------------
// Corpus 1: the cel-spec conformance suite.

test("differential: the CEL conformance suite", (t) => {
  const d = new Differ();
  const tally = newTally();
  for (const suite of conformance.suites ?? []) {
    for (const { path, t } of collectSpecTests(suite, suite.name)) {
      let reason = specSkipReason(t);
      if (KUBERNETES_DEPARTURES.has(path)) {
        // Asserted against Kubernetes' answer by the conformance tests.
        const why = "Kubernetes departs from cel-spec here (test/helpers/cel-spec.ts)";
        tally.skipped.set(why, (tally.skipped.get(why) ?? 0) + 1);
        continue;
      }
      let bindings: Record<string, CelValue> = {};
      if (reason === undefined) {
        try {
          bindings = specBindings(t);
        } catch (e) {
          if (!(e instanceof Unsupported)) throw e;
          reason = e.message;
        }
      }
      if (reason !== undefined) {
        const why = `needs protobuf messages or check-only: ${reason}`;
        tally.skipped.set(why, (tally.skipped.get(why) ?? 0) + 1);
        continue;
      }
      const c: DiffCase = { source: t.original.expr, bindings };
      const v = d.check(c);
      record(tally, path, c, v);
    }
  }
  const { unexplained, known } = explain(tally);
  report(t, "conformance", tally, known);
  // Observed: 1,327 compared; the floor leaves room for suite updates, not for a collapse.
  assert.ok(tally.compared >= 1200, `only ${tally.compared} conformance cases compared`);
  assert.deepEqual(unexplained, []);
});

// ---------------------------------------------------------------------------------------------
// Corpus 2: every expression of policies/*.yaml, against the objects of policies/*.test.yaml (and
// the parameter objects of policies/fixtures/ they name).

const POLICIES_DIR = fileURLToPath(new URL("../../../policies/", import.meta.url));

function readObject(source: At<ObjectSource>): JsonObject {
  const s = source.value;
  if (s.inline) return s.inline;
  const docs = parseAllDocuments(readFileSync(s.file.resolved, "utf8"));
  const first = Array.isArray(docs) ? docs[0] : undefined;
  return first?.toJS() as JsonObject;
}

/** Every compiled expression of a policy with its place, variables first (in their order). */
function expressionsOf(p: CompiledPolicy): { where: string; expr: CompiledExpression; mutation: boolean }[] {
  const out: { where: string; expr: CompiledExpression; mutation: boolean }[] = [];
  for (const v of p.variables)
    out.push({ where: `variables.${v.name}`, expr: v.expression, mutation: false });
  for (const m of p.matchConditions)
    out.push({ where: `matchConditions.${m.name}`, expr: m.expression, mutation: false });
  if (p.kind === "ValidatingAdmissionPolicy") {
    for (const v of p.validations) {
      out.push({ where: `validations[${v.index}]`, expr: v.expression, mutation: false });
      if (v.messageExpression)
        out.push({
          where: `validations[${v.index}].messageExpression`,
          expr: v.messageExpression,
          mutation: false,
        });
    }
    for (const a of p.auditAnnotations)
      out.push({ where: `auditAnnotations.${a.key}`, expr: a.expression, mutation: false });
  } else {
    for (const m of p.mutations)
      out.push({ where: `mutations[${m.index}]`, expr: m.expression, mutation: true });
  }
  return out;
}

interface PolicyCase {
  readonly key: string;
  readonly c: DiffCase | undefined;
  /** Set when the case is not comparable before running either engine. */
  readonly skip?: string;
}

/** Our engine's values of a policy's variables, in order (each may read the earlier ones). */
function computeVariables(
  d: Differ,
  p: CompiledPolicy,
  bindings: Record<string, CelValue>,
): Map<string, CelValue | CelError> {
  const vars = new Map<string, CelValue | CelError>();
  for (const v of p.variables) {
    const value = d.evaluateOurs({ source: v.expression.source, bindings, variables: new Map(vars) });
    vars.set(v.name, value);
  }
  return vars;
}

async function policyCases(d: Differ): Promise<PolicyCase[]> {
  const out: PolicyCase[] = [];
  const seen = new Set<string>();
  const suites = readdirSync(POLICIES_DIR)
    .filter((f) => f.endsWith(".test.yaml"))
    .sort();
  for (const file of suites) {
    const path = `${POLICIES_DIR}${file}`;
    const { suite, diagnostics } = parseSuiteText(readFileSync(path, "utf8"), path);
    assert.ok(suite, `${file}: ${diagnostics.map((x) => x.message).join("; ")}`);
    const loaded = await loadPolicyPaths(suite.policies.map((p) => p.value.resolved));
    const extra = suite.resources.length
      ? await loadPolicyPaths(suite.resources.map((r) => r.value.resolved))
      : undefined;
    const set = compilePolicySet(loaded.set);
    const resources: ResourceObject[] = [...set.resources, ...(extra?.set.resources ?? [])];
    const namespaces = new Map(
      resources.filter((r) => r.kind === "Namespace").map((r) => [r.name, r.object]),
    );
    for (const sc of suite.cases) {
      if (sc.review) continue;
      const object = readObject(sc.object);
      const oldObject = sc.oldObject ? readObject(sc.oldObject) : undefined;
      const ref = resourceRef(object, sc.object.path);
      assert.ok(ref.ok, `${file} ${sc.name}: ${ref.ok ? "" : ref.error}`);
      const nsObject = sc.namespaceObject?.value;
      const nsMeta = nsObject?.metadata as { name?: unknown } | undefined;
      const nsName = typeof nsMeta?.name === "string" ? nsMeta.name : undefined;
      const defaultNamespace = nsName ?? sc.defaultNamespace;
      const built = buildRequest(
        {
          ...ref.value,
          namespace: sc.namespace ?? ref.value.namespace,
          name: sc.requestName ?? ref.value.name,
        },
        {
          operation: sc.operation,
          object,
          ...(oldObject ? { oldObject } : {}),
          ...(sc.subResource ? { subResource: sc.subResource } : {}),
          userInfo: sc.userInfo ?? DEFAULT_USER,
          ...(defaultNamespace !== undefined ? { defaultNamespace } : {}),
          uid: "00000000-0000-4000-8000-000000000001",
          defaults: sc.defaulting ?? true,
        },
      );
      assert.ok(built.ok, `${file} ${sc.name}: ${built.ok ? "" : built.error}`);
      let request = built.value.request;
      if (sc.kind) request = { ...request, kind: sc.kind, requestKind: sc.kind };
      if (sc.resource) request = { ...request, resource: sc.resource, requestResource: sc.resource };
      const ctx: EngineContext = {
        namespace: (name) => (nsObject && name === nsName ? nsObject : namespaces.get(name)),
        params: paramLookup(resources),
      };
      const prepared = prepare(request, ctx);
      const { object: o, oldObject: old, request: req, namespaceObject } = prepared.allValues();
      const base = {
        object: o ?? null,
        oldObject: old ?? null,
        request: req ?? null,
        namespaceObject: namespaceObject ?? null,
      };
      for (const policy of set.policies) {
        // Each params object the policy's bindings select (or null), as the engine evaluates once per params.
        const kind = policy.policy.paramKind;
        const params: CelValue[] = [];
        if (kind)
          for (const b of set.bindings)
            if (b.policy === policy && b.binding.paramRef) {
              const found = collectParams(ctx.params, kind, b.binding.paramRef, request.namespace);
              for (const r of found.ok ? found.value : []) params.push(toCel(r.object));
            }
        if (params.length === 0) params.push(null);
        for (const [pi, param] of params.entries()) {
          const bindings = { ...base, params: param };
          const variables = policy.variables.length ? computeVariables(d, policy, bindings) : undefined;
          for (const { where, expr, mutation } of expressionsOf(policy)) {
            const key = `${file} ${policy.name} ${where} @ ${sc.name}${params.length > 1 ? ` (params ${pi})` : ""}`;
            if (!expr.program) {
              out.push({ key, c: undefined, skip: "the expression does not compile in its policy" });
              continue;
            }
            if (/\bauthorizer\b/.test(expr.source)) {
              out.push({ key, c: undefined, skip: "uses the Kubernetes authorizer library" });
              continue;
            }
            const c: DiffCase = {
              source: expr.source,
              bindings,
              ...(variables ? { variables } : {}),
              ...(mutation ? { structTypes: ["Object", "JSONPatch"] } : {}),
            };
            // Suites repeat objects: compare each distinct (expression, bindings) pair once.
            const id = `${expr.source}\u0000${canonOurs(bindings)}\u0000${variables ? canonOurs(new CelMap([...variables].map(([k, v]) => [k, v instanceof CelError ? `error:${v.message}` : v] as const))) : ""}`;
            if (seen.has(id)) continue;
            seen.add(id);
            out.push({ key, c });
          }
        }
      }
    }
  }
  return out;
}

test("differential: the expressions of policies/ on their test suites' objects", async (t) => {
  const d = new Differ({ extras: {} });
  const tally = newTally();
  const expressions = new Set<string>();
  const comparedExpressions = new Set<string>();
  const outcomes = { value: 0, error: 0 };
  for (const pc of await policyCases(d)) {
    if (pc.c) expressions.add(pc.c.source);
    if (!pc.c) {
      tally.skipped.set(pc.skip ?? "?", (tally.skipped.get(pc.skip ?? "?") ?? 0) + 1);
      continue;
    }
    const v = d.check(pc.c);
    record(tally, pc.key, pc.c, v);
    if (v.status !== "skip") {
      comparedExpressions.add(pc.c.source);
      outcomes[v.ours.kind]++;
    }
  }
  const { unexplained, known } = explain(tally);
  report(t, "policies", tally, known);
  t.diagnostic(
    `distinct expressions: ${expressions.size}, of which compared on at least one case: ${comparedExpressions.size}`,
  );
  t.diagnostic(`compared cases where ours gives a value: ${outcomes.value}, an error: ${outcomes.error}`);
  // Most compared cases must be values: two errors agreeing is the weaker evidence.
  assert.ok(outcomes.value > outcomes.error, JSON.stringify(outcomes));
  assert.ok(tally.compared >= FLOOR_POLICIES, `only ${tally.compared} policy cases compared`);
  assert.deepEqual(unexplained, []);
});

// ---------------------------------------------------------------------------------------------
// Corpus 3: generated expressions.

const SEED = 20261122;
const GENERATED = 3000;

test("the expression generator is deterministic and varied", () => {
  const a = generateExpressions(200, SEED);
  assert.deepEqual(generateExpressions(200, SEED), a);
  assert.notDeepEqual(generateExpressions(200, SEED + 1), a);
  assert.equal(new Set(a).size, 200);
  for (const feature of [
    "/",
    "%",
    "&&",
    "||",
    "?",
    " in ",
    "size(",
    "has(",
    ".all(",
    ".exists(",
    ".map(",
    ".filter(",
    "int(",
    "uint(",
    "double(",
    "string(",
    "bytes(",
    "type(",
    "dyn(",
    ".matches(",
  ])
    assert.ok(
      generateExpressions(GENERATED, SEED).some((e) => e.includes(feature)),
      `no generated expression uses ${feature}`,
    );
});

test("differential: a generated corpus", (t) => {
  const d = new Differ();
  const tally = newTally();
  const bindings = generatorBindings();
  const outcomes = { value: 0, error: 0 };
  for (const source of generateExpressions(GENERATED, SEED, 4)) {
    const c: DiffCase = { source, bindings };
    const v = d.check(c);
    record(tally, source, c, v);
    outcomes[v.ours.kind]++;
  }
  const { unexplained, known } = explain(tally);
  report(t, "generated", tally, known);
  t.diagnostic(`our outcomes: ${outcomes.value} values, ${outcomes.error} errors`);
  // Errors must be a real share of the corpus (error propagation is half of what is tested), not all of it.
  assert.ok(outcomes.error > GENERATED / 20 && outcomes.value > GENERATED / 2, JSON.stringify(outcomes));
  assert.ok(tally.compared >= FLOOR_GENERATED, `only ${tally.compared} generated cases compared`);
  assert.deepEqual(unexplained, []);
});

// ---------------------------------------------------------------------------------------------
// The known disagreements, one visible test each.

for (const k of KNOWN) {
  if (k.wrong === "ours") {
    test(`known disagreement (ours is wrong): ${k.expr}`, { todo: k.reason }, () => {
      const v = new Differ().check({ source: k.expr, bindings: {} });
      assert.equal(
        v.status,
        "agree",
        `ours ${describeOutcome(v.ours)}, @bufbuild/cel ${describeOutcome(v.theirs)}`,
      );
    });
  } else {
    test(`known @bufbuild/cel deviation: ${k.expr} — ${k.reason}`, (t) => {
      const v = new Differ().check({ source: k.expr, bindings: {} });
      const ours = v.ours.kind === "value" ? v.ours.repr : "error";
      assert.equal(ours, k.celGo, "ours must give cel-go's result");
      if (v.status === "agree") t.diagnostic("@bufbuild/cel no longer deviates here: the entry can go");
      else t.diagnostic(`@bufbuild/cel: ${describeOutcome(v.theirs)}`);
    });
  }
}
