/**
 * Generated code reaches run-time helpers only through the typed table of its writer (issue 24):
 * a helper's name comes from `Gen.h`, a name the table lacks is a type error, and the function
 * built defines only the helpers its code named.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Gen } from "../../../src/cel/plan/gen.ts";
import { HELPERS } from "../../../src/cel/plan/helpers.ts";
import { type CelValue, EvalState } from "../../../src/cel/index.ts";

const run = (f: (a: unknown, st: EvalState, s: CelValue[]) => CelValue): CelValue =>
  f({ values: {} }, new EvalState(1000, Number.POSITIVE_INFINITY), []);

void test("a helper named through Gen.h is defined in the generated function", () => {
  const g = new Gen(HELPERS, false);
  const t = g.temp();
  g.line(`${t} = ${g.h.celEquals}(1n, 1);`);
  assert.equal(run(g.build(t)), true);
});

void test("a helper's name written into the code any other way is not defined there", () => {
  const g = new Gen(HELPERS, false);
  const t = g.temp();
  g.line(`${t} = celEquals(1n, 1);`);
  assert.throws(
    () => run(g.build(t)),
    (e: unknown) => e instanceof ReferenceError && /celEquals/.test(e.message),
  );
});

void test("a name the helper table lacks is a type error (npm test type-checks this file)", () => {
  const g = new Gen(HELPERS, false);
  // @ts-expect-error: not a helper
  const name: string = g.h.noSuchHelper;
  assert.equal(name, undefined);
});
