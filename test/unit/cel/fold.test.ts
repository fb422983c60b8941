/**
 * Conversions of constants fail when the program is built, as in the API server: Kubernetes builds
 * programs with cel.OptOptimize (apiserver/pkg/cel/environment/base.go), whose decorator (cel-go
 * interpreter/decorators.go decOptimize, maybeOptimizeConstUnary) evaluates a type conversion
 * function (overloads.IsTypeConversionFunction) of one constant argument while planning, after
 * folding constant list and map literals (maybeBuildListLiteral, maybeBuildMapLiteral) and inner
 * conversions; a failure refuses the expression with "program instantiation failed: "
 * (admission/plugin/cel/compile.go). The kube acceptance suite saw v1.36.3 and v1.37.2 refuse each
 * of these expressions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ADMISSION_VARIABLES, compile, createEnvironment } from "../../../src/cel/index.ts";
import { errorInBothTiers } from "../../helpers/tiers.ts";

const env = (kubernetesVersion?: string, checks?: "kubernetes" | "cel") =>
  createEnvironment({
    variables: { ...ADMISSION_VARIABLES, x: "dyn" },
    ...(kubernetesVersion ? { kubernetesVersion } : {}),
    ...(checks ? { checks } : {}),
  });

function refusal(source: string, kubernetesVersion?: string): string | undefined {
  const r = compile(source, env(kubernetesVersion));
  if (r.ok) return undefined;
  return r.problems.map((p) => `${p.code} ${p.offset}: ${p.message}`).join("\n");
}

test("a failing conversion of a constant is refused when the program is built, at the call", () => {
  assert.equal(
    refusal("int('x')"),
    "PE_CEL_INVALID 3: program instantiation failed: type conversion error from 'string' to 'int'",
  );
  assert.equal(
    refusal("uint(-1)"),
    "PE_CEL_INVALID 4: program instantiation failed: unsigned integer overflow",
  );
  assert.equal(
    refusal("string(b'\\xff')"),
    "PE_CEL_INVALID 6: program instantiation failed: invalid UTF-8 in bytes, cannot convert to string",
  );
  assert.equal(refusal("int(1e99)"), "PE_CEL_INVALID 3: program instantiation failed: integer overflow");
});

test("folding is bottom up: a conversion of a folded conversion, dyn of a constant, in any branch", () => {
  // dyn is a conversion function too: dyn(1) folds to the constant 1, then duration(1) runs.
  assert.equal(
    refusal("duration(dyn(1))", "1.36"),
    "PE_CEL_INVALID 8: program instantiation failed: type conversion error from 'int' to 'google.protobuf.Duration'",
  );
  assert.equal(
    refusal("duration(dyn(1))", "1.37"),
    "PE_CEL_INVALID 8: program instantiation failed: no such overload: duration(int)",
  );
  assert.equal(
    refusal("int(string(1.5))"),
    "PE_CEL_INVALID 3: program instantiation failed: type conversion error from 'string' to 'int'",
  );
  // Planned whether or not it would run: a branch never taken is folded too.
  assert.match(refusal("false && int('x') == 1") ?? "", /program instantiation failed/);
  assert.match(refusal("[1, 2].all(i, uint(-1) > 0u)") ?? "", /unsigned integer overflow/);
});

test("what folds and succeeds, or is not constant, compiles; the run time keeps its behaviour", () => {
  for (const ok of ["int('12') == 12", "dyn([1, 2]) == [1, 2]", "type(1) == int"])
    assert.equal(refusal(ok), undefined, ok);
  // Not a constant: the conversion runs, and fails, when evaluated.
  assert.equal(refusal("int(x) == 1"), undefined);
  assert.equal(errorInBothTiers("int(x) == 1", { x: "x" }), "type conversion error from 'string' to 'int'");
  assert.equal(refusal("int(x + 'y') == 1"), undefined);
  // A list with a variable in it is not folded, so neither is a conversion of it.
  assert.equal(refusal("dyn([x]) == [1]"), undefined);
});

test("only the Kubernetes checks fold: cel-go's checker alone (checks: cel) builds no program here", () => {
  assert.equal(compile("int('x')", env(undefined, "cel")).ok, true);
});
