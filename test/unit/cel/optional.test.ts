/**
 * Optional values at run time as Kubernetes runs them (cel-go v0.26): `or` and `orValue`
 * (cel/library.go evalOptionalOr / evalOptionalOrValue), every case in both evaluation tiers.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { toCel } from "../../../src/cel/index.ts";
import { Optional } from "../../../src/cel/runtime/values.ts";
import { canonOurs } from "../../helpers/differential.ts";
import { errorInBothTiers, inBothTiers, valueInBothTiers } from "../../helpers/tiers.ts";

const object = JSON.parse(
  JSON.stringify({
    spec: { containers: [{ name: "a", volumeMounts: [{ name: "v" }] }, { name: "b" }], replicas: 2 },
  }),
);

// cel-go cel/library.go evalOptionalOrValue: `if !ok { return optLHS }`. The behaviour of every
// cel-go up to v0.27, so of every Kubernetes release up to 1.36; v0.28 makes it `no such overload`.
test("orValue and or on a value that is not an optional return it unchanged (cel-go cel/library.go, up to v0.27)", () => {
  assert.equal(
    canonOurs(valueInBothTiers("object.spec.containers[0].volumeMounts.orValue([])", { object })),
    canonOurs(toCel([{ name: "v" }])),
  );
  assert.equal(valueInBothTiers("object.spec.replicas.orValue(5)", { object }), 2n);
  assert.equal(valueInBothTiers("x.orValue(1)", { x: "s" }), "s");
  assert.equal(valueInBothTiers("x.or(optional.of(1))", { x: 3n }), 3n);
  assert.equal(
    valueInBothTiers("object.spec.containers.map(c, c.name.orValue('')).join(',')", { object }),
    "a,b",
  );
});

test("orValue and or evaluate their argument only when the receiver is optional.none() (cel-go evalOptionalOr*)", () => {
  assert.equal(valueInBothTiers("optional.of(1).orValue({'x': 1}.y)"), 1n);
  assert.equal(valueInBothTiers("object.?spec.?replicas.orValue(1 / 0)", { object }), 2n);
  assert.equal(errorInBothTiers("optional.none().orValue({'x': 1}.y)"), "no such key: y");
  assert.equal(errorInBothTiers("object.?spec.?nothing.orValue(1 / 0)", { object }), "division by zero");
  assert.equal(
    canonOurs(valueInBothTiers("optional.of(1).or(optional.of({'x': 1}.y))")),
    canonOurs(Optional.of(1n)),
  );
  assert.equal(canonOurs(valueInBothTiers("optional.none().or(optional.of(2))")), canonOurs(Optional.of(2n)));
  assert.equal(errorInBothTiers("optional.none().or(optional.of(1 / 0))"), "division by zero");
  // The second operand of `or` is returned whatever it is, as cel-go returns rhs.Eval.
  assert.equal(
    canonOurs(valueInBothTiers("object.?spec.?nothing.or(optional.none())", { object })),
    canonOurs(Optional.none),
  );
});

test("an error in the receiver of orValue or or propagates, whatever the argument (cel-go evalOptionalOr*)", () => {
  assert.equal(errorInBothTiers("x.missing.orValue(1)", { x: toCel({ a: 1 }) }), "no such key: missing");
  assert.equal(errorInBothTiers("dyn(1 / 0).or(optional.of(1))"), "division by zero");
});

// The decorated node is no InterpretableCall, so cel-go's cost observer (interpreter/runtimecost.go
// Observe) charges nothing for it: only the receiver and, when evaluated, the argument cost.
test("orValue and or cost nothing themselves, only their operands (cel-go interpreter/runtimecost.go)", () => {
  // optional.of is a call (1); the literals are free.
  assert.equal(inBothTiers("optional.of(1).orValue(2)").cost, 1);
  assert.equal(inBothTiers("optional.none().or(optional.of(2))").cost, 2);
  assert.equal(inBothTiers("optional.of(1).or(optional.of(2))").cost, 1);
  // A chain costs what its selections cost, with orValue or without.
  const chain = inBothTiers("object.?spec.?replicas", { object }).cost;
  assert.equal(inBothTiers("object.?spec.?replicas.orValue(0)", { object }).cost, chain);
  assert.equal(inBothTiers("object.?spec.?nothing.orValue(size('ab'))", { object }).cost, chain + 1);
  assert.equal(inBothTiers("object.spec.replicas.orValue(size('ab'))", { object }).cost, chain);
});

// cel-go cel/library.go, optionalLib.CompileOptions `if lib.version >= 2` (cel-go v0.23, so
// Kubernetes 1.33 and later, which enable cel.OptionalTypes() without a version).
test("first and last give an optional of the list's end element, none for an empty list (cel-go cel/library.go list_first/list_last)", () => {
  assert.equal(canonOurs(valueInBothTiers("[1, 2, 3].first()")), canonOurs(Optional.of(1n)));
  assert.equal(canonOurs(valueInBothTiers("[1, 2, 3].last()")), canonOurs(Optional.of(3n)));
  assert.equal(canonOurs(valueInBothTiers("[].first()")), canonOurs(Optional.none));
  assert.equal(canonOurs(valueInBothTiers("[].last()")), canonOurs(Optional.none));
  assert.equal(valueInBothTiers("object.spec.containers.last().?name.orValue('')", { object }), "b");
  assert.equal(valueInBothTiers("object.spec.containers.first().hasValue()", { object }), true);
  // A call with no cost of its own in Kubernetes' library/cost.go: the base 1.
  assert.equal(inBothTiers("[1].first()").cost, 1 + inBothTiers("[1]").cost);
});

test("optional.unwrap and unwrapOpt keep the present values of a list of optionals (cel-go cel/library.go optUnwrap)", () => {
  assert.equal(
    canonOurs(valueInBothTiers("optional.unwrap([optional.of(1), optional.none(), optional.of(3)])")),
    canonOurs(toCel([1, 3])),
  );
  assert.equal(
    canonOurs(valueInBothTiers("[optional.none(), optional.of('a')].unwrapOpt()")),
    canonOurs(toCel(["a"])),
  );
  assert.equal(canonOurs(valueInBothTiers("[optional.none()].unwrapOpt()")), canonOurs(toCel([])));
  assert.equal(
    valueInBothTiers("object.spec.containers.map(c, c.?volumeMounts).unwrapOpt().size()", { object }),
    1n,
  );
  // optUnwrap: `value %v is not optional` for an element of a dyn list that is no optional.
  // A literal list mixing optionals and values is refused by the checker; a dyn concatenation is not.
  assert.equal(errorInBothTiers("(dyn([optional.of(1)]) + dyn([2])).unwrapOpt()"), "value 2 is not optional");
  assert.equal(errorInBothTiers("optional.unwrap(dyn(['a']))"), "value a is not optional");
});
