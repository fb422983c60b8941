/**
 * `duration(int)`: cel-go declares the overload up to v0.28 (common/stdlib/standard.go
 * IntToDuration; Kubernetes up to 1.36) and binds it to Int.ConvertToType, which has no case for a
 * duration (common/types/int.go): it type-checks and fails when run. Kubernetes' duration literal
 * validator rejects a constant argument at compile time; a computed one reaches run time. cel-go
 * v0.29 (Kubernetes 1.37, the default) no longer declares it: a call through `dyn` finds no overload
 * (common/decls/decls.go Bindings' dispatch, MaybeNoSuchOverload).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ADMISSION_VARIABLES, createEnvironment } from "../../../src/cel/index.ts";
import { errorInBothTiers } from "../../helpers/tiers.ts";

const AT_136 = createEnvironment({
  variables: { ...ADMISSION_VARIABLES, x: "dyn" },
  kubernetesVersion: "1.36",
});

test("duration(int) fails at run time as cel-go's Int.ConvertToType does (common/types/int.go), up to 1.36", () => {
  const text = "type conversion error from 'int' to 'google.protobuf.Duration'";
  assert.equal(errorInBothTiers("duration(x) > duration('0s')", { x: 5n }, AT_136), text);
  assert.equal(
    errorInBothTiers(
      "duration(object.spec.replicas) > duration('0s')",
      { object: { spec: { replicas: 2 } } },
      AT_136,
    ),
    text,
  );
});

test("from 1.37 (cel-go v0.29) a dyn int finds no duration overload at run time", () => {
  const text = "no such overload: duration(int)";
  assert.equal(errorInBothTiers("duration(x) > duration('0s')", { x: 5n }), text);
  assert.equal(
    errorInBothTiers("duration(object.spec.replicas) > duration('0s')", {
      object: { spec: { replicas: 2 } },
    }),
    text,
  );
});
