/**
 * The cel-spec conformance suites (as packaged by @bufbuild/cel-spec) run through `evaluate`, with
 * cel-go's type checker but not Kubernetes' AST validators (`checks: "cel"`).
 *
 * Tests that need what this engine deliberately lacks are skipped with a reason: protobuf messages
 * and enums, containers, function declarations in the type environment, and check-only tests.
 * Error expectations are met by any failure: cel-spec does not fix error texts, and a check-time
 * error stands in for a runtime one where cel-go would need type checking disabled.
 * KNOWN_FAILURES lists tests that are expected to fail for now; they run as `todo`, and one that
 * passes fails the run (remove it from the list), so the list cannot hide a case that works.
 * KUBERNETES_DEPARTURES (test/helpers/cel-spec.ts) lists tests where Kubernetes' CEL gives another
 * answer than the suite on purpose; those assert the Kubernetes answer.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { tests as conformance } from "@bufbuild/cel-spec/testdata/conformance.js";
import type { SerializedIncrementalTest } from "@bufbuild/cel-spec/testdata/tests.js";
import { celEquals } from "../../../src/cel/runtime/equality.ts";
import {
  collectSpecTests,
  type Departure,
  fromSpecValue,
  KUBERNETES_DEPARTURES,
  type JsonObject,
  obj,
  specBindings,
  specSkipReason,
  Unsupported,
} from "../../helpers/cel-spec.ts";
import {
  CelMap,
  CelType,
  type CelValue,
  Duration,
  isList,
  isMap,
  mapEntries,
  mapGet,
  mapSize,
  Timestamp,
  typeName,
  UInt,
} from "../../../src/cel/runtime/values.ts";
import { setCodegenMode } from "../../../src/cel/configure.ts";

// Every case on generated code (plan/gen.ts); nodes without an emitter still run as closures inside it.
setCodegenMode("always");

const SUITES = [
  "basic",
  "comparisons",
  "conversions",
  "fp_math",
  "integer_math",
  "lists",
  "logic",
  "macros",
  "macros2",
  "string",
  "timestamps",
  "fields",
  "optionals",
  "string_ext",
  "math_ext",
  "bindings_ext",
  "parse",
];

/** "suite/section/name" of tests expected to fail for now. Each entry should say why. */
const KNOWN_FAILURES: ReadonlyMap<string, string> = new Map<string, string>([
  [
    "fields/quoted_map_fields/field_access_slash",
    "backquoted field names (cel-spec 0.24) are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/field_access_dash",
    "backquoted field names (cel-spec 0.24) are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/field_access_dot",
    "backquoted field names (cel-spec 0.24) are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/has_field_slash",
    "backquoted field names (cel-spec 0.24) are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/has_field_dash",
    "backquoted field names (cel-spec 0.24) are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/has_field_dot",
    "backquoted field names (cel-spec 0.24) are not parsed by @bufbuild/cel 0.6.1",
  ],
  ["parse/comments/new_line_terminated", "@bufbuild/cel 0.6.1's parser rejects this comment form"],
]);

type Evaluate = (
  source: string,
  bindings?: Record<string, unknown>,
  options?: { checks?: "kubernetes" | "cel" | "none" },
) => { ok: true; value: CelValue; type: string } | { ok: false; error: string; stage: "compile" | "eval" };

const INDEX = new URL("../../../src/cel/index.ts", import.meta.url);

/** Equality that also insists on matching types (celEquals alone has 1 == 1.0) and NaN == NaN. */
function sameValue(a: CelValue, b: CelValue): boolean {
  if (typeName(a) !== typeName(b)) return false;
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) ? Number.isNaN(b) : a === b;
  if (isList(a) && isList(b))
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i] as CelValue));
  if (isMap(a) && isMap(b)) {
    if (mapSize(a) !== mapSize(b)) return false;
    for (const [k, v] of mapEntries(a)) {
      const w = mapGet(b, k);
      if (w === undefined || !sameValue(v, w)) return false;
    }
    return true;
  }
  return celEquals(a, b);
}

function show(v: CelValue): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === "bigint") return `${x}`;
    if (x instanceof UInt) return `${x.value}u`;
    if (x instanceof CelMap) return Object.fromEntries([...x.entries()].map(([k, w]) => [String(k), w]));
    if (x instanceof Uint8Array) return `b[${[...x].join(",")}]`;
    if (x instanceof Duration) return `duration(${x.nanos}ns)`;
    if (x instanceof Timestamp) return `timestamp(${x.nanos}ns)`;
    if (x instanceof CelType) return `type(${x.name})`;
    if (typeof x === "number" && !Number.isFinite(x)) return String(x);
    return x;
  });
}

/** The Kubernetes answer where it departs from the suite's (the departure's reason says why). */
function assertDeparture(expr: string, r: ReturnType<Evaluate>, d: Departure): void {
  const k = d.kubernetes;
  if ("error" in k) {
    assert.equal(r.ok, false, `${expr}: ${d.reason}`);
    if (!r.ok) assert.ok(r.error.includes(k.error), `${expr}: ${r.error} (${d.reason})`);
  } else {
    assert.ok(r.ok, `${expr}: ${r.ok ? "" : r.error} (${d.reason})`);
    if (r.ok) assert.ok(sameValue(r.value, k.value), `${expr}: got ${show(r.value)} (${d.reason})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Which tests we run.

interface Expectation {
  readonly error: boolean;
  readonly value: CelValue;
}

function expectation(t: SerializedIncrementalTest): Expectation {
  const o = t.original as unknown as JsonObject;
  if (o.evalError !== undefined) return { error: true, value: null };
  if (o.value !== undefined) return { error: false, value: fromSpecValue(o.value) };
  if (o.typedResult !== undefined) return { error: false, value: fromSpecValue(obj(o.typedResult).result) };
  if (o.unknown !== undefined || o.anyEvalErrors !== undefined || o.anyUnknowns !== undefined) {
    throw new Unsupported("unknowns");
  }
  // cel-spec: a test without an expected result expects `true`.
  return { error: false, value: true };
}

// ---------------------------------------------------------------------------------------------

if (!existsSync(INDEX)) {
  test.skip("CEL conformance suites (src/cel/index.ts does not exist yet)");
} else {
  const { evaluate } = (await import(INDEX.href)) as { evaluate: Evaluate };
  const summary: string[] = [];

  for (const suiteName of SUITES) {
    const suite = conformance.suites?.find((s) => s.name === suiteName);
    test(`conformance: ${suiteName}`, async (t) => {
      assert.ok(suite, `suite ${suiteName} is in the conformance data`);
      const cases = collectSpecTests(suite, suiteName, []);
      let passed = 0;
      let failed = 0;
      const skipped: string[] = [];
      for (const { path, t: c } of cases) {
        let reason = specSkipReason(c);
        let expected: Expectation | undefined;
        let vars: Record<string, CelValue> = {};
        if (reason === undefined) {
          try {
            expected = expectation(c);
            vars = specBindings(c);
          } catch (e) {
            if (!(e instanceof Unsupported)) throw e;
            reason = e.message;
          }
        }
        if (reason !== undefined || expected === undefined) {
          skipped.push(`${path}: ${reason}`);
          await t.test(path, { skip: reason ?? "unsupported" }, () => {});
          continue;
        }
        const want = expected;
        const known = KNOWN_FAILURES.get(path);
        const departure = KUBERNETES_DEPARTURES.get(path);
        let ok = false;
        const check = () => {
          // cel-go's checker as cel-spec's conformance runner configures it: without the AST
          // validators Kubernetes adds (homogeneous literals would refuse the mixed-type cases).
          // A `disable_check` case tests run-time semantics of what the checker refuses: unchecked.
          const disabled = (c.original as { disableCheck?: boolean }).disableCheck === true;
          const r = evaluate(c.original.expr, vars, { checks: disabled ? "none" : "cel" });
          if (departure !== undefined) {
            assertDeparture(c.original.expr, r, departure);
          } else if (want.error) {
            assert.equal(
              r.ok,
              false,
              `${c.original.expr}: expected an error, got ${r.ok ? show(r.value) : ""}`,
            );
          } else {
            assert.ok(r.ok, `${c.original.expr}: ${r.ok ? "" : `${r.stage} error: ${r.error}`}`);
            assert.ok(
              sameValue(r.value, want.value),
              `${c.original.expr}: got ${show(r.value)}, want ${show(want.value)}`,
            );
          }
        };
        await t.test(path, (st) => {
          if (known === undefined) {
            check();
            ok = true;
            return;
          }
          // A known failure that passes now fails the run, so the list cannot go stale: a case
          // marked `todo` whatever its outcome is a test that cannot fail.
          try {
            check();
          } catch {
            st.todo(known);
            return;
          }
          ok = true;
          assert.fail(`${path} passes now: remove it from KNOWN_FAILURES (it said: ${known})`);
        });
        if (ok) passed++;
        else failed++;
      }
      const line = `${suiteName}: ${passed}/${passed + failed} passed, ${skipped.length} skipped`;
      summary.push(line);
      t.diagnostic(line);
      // One line per reason keeps CI logs readable; CELGATE_CONFORMANCE_VERBOSE=1 lists every case.
      if (process.env.CELGATE_CONFORMANCE_VERBOSE) for (const s of skipped) t.diagnostic(`skipped ${s}`);
      else {
        const byReason = new Map<string, number>();
        for (const s of skipped) {
          const reason = s.slice(s.indexOf(": ") + 2);
          byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
        }
        for (const [reason, n] of byReason) t.diagnostic(`skipped ${n}: ${reason}`);
      }
    });
  }

  test("conformance summary", () => {
    assert.equal(summary.length, SUITES.length);
    console.log(summary.join("\n"));
  });
}
