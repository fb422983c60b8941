/**
 * `duration(int)`: cel-go declares the overload (common/stdlib/standard.go IntToDuration, up to
 * v0.28, so every Kubernetes release) and binds it to Int.ConvertToType, which has no case for a
 * duration (common/types/int.go): it type-checks and fails when run. Kubernetes' duration literal
 * validator rejects a constant argument at compile time; a computed one reaches run time.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorInBothTiers } from "../../helpers/tiers.ts";

test("duration(int) fails at run time as cel-go's Int.ConvertToType does (common/types/int.go)", () => {
  const text = "type conversion error from 'int' to 'google.protobuf.Duration'";
  assert.equal(errorInBothTiers("duration(x) > duration('0s')", { x: 5n }), text);
  assert.equal(
    errorInBothTiers("duration(object.spec.replicas) > duration('0s')", {
      object: { spec: { replicas: 2 } },
    }),
    text,
  );
});
