/**
 * Presence tests and strict reads at run time as Kubernetes runs them (cel-go v0.26,
 * interpreter/attributes.go refQualify and applyQualifiers; Kubernetes never sets
 * EnableErrorOnBadPresenceTest): every case in both evaluation tiers.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { toCel } from "../../../src/cel/index.ts";
import { Optional } from "../../../src/cel/runtime/values.ts";
import { canonOurs } from "../../helpers/differential.ts";
import { errorInBothTiers, valueInBothTiers } from "../../helpers/tiers.ts";

const object = toCel({ metadata: { name: "a" }, spec: { replicas: 2, containers: [{ name: "c" }] } });
const none = canonOurs(Optional.none);

/** Values that are neither maps nor lists, as JSON input gives them and as CEL builds them. */
const SCALARS: readonly (readonly [string, Record<string, ReturnType<typeof toCel>>])[] = [
  ["x", { x: null }],
  ["x", { x: true }],
  ["x", { x: 3n }],
  ["x", { x: 1.5 }],
  ["x", { x: "text" }],
  ["dyn(b'ab')", {}],
  ["dyn(timestamp('2024-01-01T00:00:00Z'))", {}],
  ["dyn(duration('1s'))", {}],
  ["dyn(2u)", {}],
];

// refQualify's default branch: `if presenceTest && !errorOnBadPresenceTest { return nil, false, nil }`.
test("has() on null, a scalar, bytes, a timestamp or a duration is false, not an error (cel-go interpreter/attributes.go refQualify)", () => {
  for (const [x, values] of SCALARS) {
    assert.equal(valueInBothTiers(`has(${x}.f)`, values), false, x);
    assert.equal(canonOurs(valueInBothTiers(`${x}.?f`, values)), none, x);
    assert.equal(canonOurs(valueInBothTiers(`${x}[?'f']`, values)), none, x);
    assert.equal(canonOurs(valueInBothTiers(`${x}[?0]`, values)), none, x);
    assert.equal(valueInBothTiers(`${x}.?f.orValue('d')`, values), "d", x);
  }
});

test("the everyday cases: has(oldObject.metadata) on a CREATE, Gatekeeper's has(params.x) without parameters (cel-go refQualify)", () => {
  assert.equal(valueInBothTiers("has(oldObject.metadata)", { object, oldObject: null }), false);
  // Gatekeeper binds variables.params to null when a constraint has no parameters.
  assert.equal(valueInBothTiers("has(params.exemptImages)", { params: null }), false);
  assert.equal(
    valueInBothTiers("!has(params.exemptImages) || params.exemptImages.size() == 0", { params: null }),
    true,
  );
});

// applyQualifiers: `isOpt = isOpt || qual.IsOptional()`, then QualifyIfPresent for every later qualifier.
test("every select or index after the first ? of a chain is a presence test (cel-go interpreter/attributes.go applyQualifiers)", () => {
  assert.equal(canonOurs(valueInBothTiers("object.?spec.replicas.foo", { object })), none);
  assert.equal(canonOurs(valueInBothTiers("object.?metadata.name[0]", { object })), none);
  assert.equal(valueInBothTiers("{'a': dyn(1)}.?a.b.hasValue()"), false);
  assert.equal(valueInBothTiers("{'k': dyn(null)}.?k.invalid.hasValue()"), false);
  assert.equal(valueInBothTiers("{true: dyn(0)}[?true].absent.hasValue()"), false);
  assert.equal(valueInBothTiers("object.?spec.containers[0].name.orValue('')", { object }), "c");
  assert.equal(canonOurs(valueInBothTiers("object.?spec.containers[5]", { object })), none);
});

test("only the last qualifier is tested: earlier ones stay strict (cel-go interpreter/attributes.go)", () => {
  assert.equal(errorInBothTiers("has(object.status.phase)", { object }), "no such key: status");
  assert.equal(errorInBothTiers("has(x.a.b)", { x: null }), "no such key: a");
  assert.equal(valueInBothTiers("has(x.a.b)", { x: toCel({ a: null }) }), false);
  assert.equal(valueInBothTiers("has(object.spec.replicas.value)", { object }), false);
});

// refQualify's traits.Lister branch: types.IndexOrError (common/types/list.go) before the range test.
test("a presence test on a list tests the index; a key that is no index is an error (cel-go refQualify, types.IndexOrError)", () => {
  assert.equal(canonOurs(valueInBothTiers("[1, 2][?5]")), none);
  assert.equal(canonOurs(valueInBothTiers("[1, 2][?-1]")), none);
  assert.equal(canonOurs(valueInBothTiers("[1, 2][?1]")), canonOurs(Optional.of(2n)));
  // A double that converts to an int without loss, or a uint, is an index.
  assert.equal(canonOurs(valueInBothTiers("[1, 2][?dyn(1.0)]")), canonOurs(Optional.of(2n)));
  assert.equal(canonOurs(valueInBothTiers("[1, 2][?dyn(0u)]")), canonOurs(Optional.of(1n)));
  assert.equal(errorInBothTiers("[1, 2][?dyn('a')]"), "unsupported index type 'string' in list");
  assert.equal(errorInBothTiers("[1, 2][?dyn(0.5)]"), "unsupported index value 0.5 in list");
  assert.equal(
    errorInBothTiers("has(object.spec.containers.name)", { object }),
    "unsupported index type 'string' in list",
  );
  assert.equal(
    errorInBothTiers("object.spec.?containers.?name", { object }),
    "unsupported index type 'string' in list",
  );
});

// Not a presence test: interpreter/attributes.go missingKey / missingIndex (resolutionError.Error).
test("a strict read of a value that is neither a map nor a list is `no such key` (cel-go refQualify, resolutionError)", () => {
  assert.equal(errorInBothTiers("x.f", { x: 3n }), "no such key: f");
  assert.equal(errorInBothTiers("x.f", { x: null }), "no such key: f");
  assert.equal(errorInBothTiers("object.spec.replicas.value", { object }), "no such key: value");
  assert.equal(errorInBothTiers("x[1]", { x: "text" }), "no such key: 1");
  assert.equal(
    errorInBothTiers("object.spec.containers.name", { object }),
    "unsupported index type 'string' in list",
  );
  assert.equal(errorInBothTiers("[1, 2][dyn(5)]"), "index out of bounds: 5");
  assert.equal(errorInBothTiers("[1, 2][dyn(1.5)]"), "unsupported index value 1.5 in list");
  assert.equal(valueInBothTiers("[1, 2][dyn(1.0)]"), 2n);
  // Go's %v of a double key.
  assert.equal(errorInBothTiers("{'a': 1}[dyn(1e6)]"), "no such key: 1e+06");
});
