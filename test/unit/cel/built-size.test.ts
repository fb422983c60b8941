/**
 * celgate's size limit on what an evaluation builds (issue 28 item 4; src/cel/runtime/built-size.ts):
 * a deliberate difference from Kubernetes, whose cost model charges some builders by their input
 * (k8s.io/apiserver/pkg/cel/library/cost.go: replace and split cost ceil(size × 2 × 0.1); cel-go
 * interpreter/runtimecost.go counts list concatenation as O(1)). The charges stay Kubernetes'; the
 * limit stops the build before it is made, in both tiers, and the engine handles the error by
 * failurePolicy.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { MAX_BUILT_SIZE } from "../../../src/cel/runtime/built-size.ts";
import { errorInBothTiers, inBothTiers, valueInBothTiers } from "../../helpers/tiers.ts";

const LIMIT_TEXT =
  /^celgate's size limit: the expression would build a (string|list|bytes) of \d+ \w+, over the limit of 8388608 /;

test("the limit is above anything the webhook's request body can carry", () => {
  assert.equal(MAX_BUILT_SIZE, 8 * 1024 * 1024);
});

test("replace that would build more than the limit fails before it builds, at Kubernetes' cost (library/cost.go replace)", () => {
  const x = "a".repeat(23_000);
  const o = inBothTiers("x.replace('a', x).size()", { x });
  assert.ok("error" in o, "an error");
  assert.match(o.error, LIMIT_TEXT);
  assert.match(o.error, /a string of 529000000 characters/);
  // Kubernetes' charge stands: ceil(23000 × 2 × 0.1) for replace (library/cost.go).
  assert.equal(o.cost, 4600);
  // An empty `old` is replaced before every code point and at the end.
  assert.match(errorInBothTiers("x.replace('', x).size()", { x }), /a string of 529046000 characters/);
  // Within the limit, nothing changes; a count limits the replacements counted.
  assert.equal(valueInBothTiers("x.replace('a', 'bb').size()", { x }), 46_000n);
  assert.equal(valueInBothTiers("x.replace('a', x, 2).size()", { x }), BigInt(23_000 * 3 - 2));
});

test("concatenating strings, bytes or lists past the limit fails (std _+_, O(1) for lists in cel-go's cost)", () => {
  // Kubernetes charges 0.1 per character or byte made: 9 million is within a call's 1,000,000.
  const x = "a".repeat(4_500_000);
  assert.match(errorInBothTiers("(x + x).size()", { x }), /a string of 9000000 characters/);
  // Bytes cost their conversion too, which the per-call limit stops first; the size limit holds
  // under a larger one.
  const bytes = inBothTiers("(bytes(x) + bytes(x)).size()", { x }, undefined, 100_000_000);
  assert.match("error" in bytes ? bytes.error : "no error", /a bytes of 9000000 bytes/);
  assert.equal(valueInBothTiers("(x + 'b').size()", { x }), 4_500_001n);
  // A list doubled by nested binds: each + costs 1 in Kubernetes, the 21st is over the limit.
  let source = "l20 + l20";
  for (let i = 20; i >= 1; i--) source = `cel.bind(l${i}, l${i - 1} + l${i - 1}, ${source})`;
  source = `cel.bind(l0, [1, 2, 3, 4, 5, 6, 7, 8], ${source}).size()`;
  assert.match(errorInBothTiers(source), /a list of 16777216 elements/);
});

test("join and format past the limit fail (strings extension)", () => {
  const x = "a".repeat(3_000_000);
  // Kubernetes charges format by its format string alone (cel-go runtimecost.go ExtFormatString).
  assert.match(
    errorInBothTiers("'%s%s%s'.format([x, x, x]).size()", { x }),
    /a string of 9000000 characters/,
  );
  // join is charged by its result (library/cost.go), which the per-call limit stops first; the
  // size limit still holds under a larger limit.
  const join = (source: string) => {
    const o = inBothTiers(source, { x }, undefined, 100_000_000);
    return "error" in o ? o.error : "no error";
  };
  assert.match(join("[x, x, x].join().size()"), /a string of 9000000 characters/);
  assert.match(join("[x, x, x].join('-').size()"), /a string of 9000002 characters/);
  assert.equal(valueInBothTiers("[x].join().size()", { x }), 3_000_000n);
});

// The issue's case, through the engine, in a child process so that the test runner never holds
// such a string. Before this limit the child built the 529 million characters (a flat one-byte
// string, which V8 places outside the limit --max-old-space-size sets, so the process survives
// here and grows past a 512 MiB container's memory) and admitted the request; with it, the
// evaluation fails before building and failurePolicy decides.
const CHILD = `
import { podObject, podRequest, validateText, vap, vapBinding, yamlDocs } from "./test/helpers/engine.ts";
const note = "a".repeat(23000);
const expression = "object.metadata.annotations.note.replace('a', object.metadata.annotations.note).size() > 0";
const out = {};
for (const failurePolicy of ["Fail", "Ignore"]) {
  const object = { ...podObject(), metadata: { name: "web", namespace: "default", annotations: { note } } };
  const d = validateText(
    yamlDocs(vap("p", { failurePolicy, validations: [{ expression }] }), vapBinding("b", "p")),
    podRequest(object),
  );
  out[failurePolicy] = { allowed: d.allowed, message: d.status?.message ?? null };
}
process.stdout.write(JSON.stringify(out));
`;

test("a policy that would build 529 million characters fails its evaluation, and failurePolicy decides", {
  timeout: 120_000,
}, () => {
  const r = spawnSync(
    process.execPath,
    ["--max-old-space-size=256", "--import", "tsx", "--input-type=module", "-e", CHILD],
    { encoding: "utf8", timeout: 100_000, maxBuffer: 1 << 20 },
  );
  assert.equal(r.status, 0, `the child failed: ${r.error?.message ?? ""} ${r.stderr.slice(-2000)}`);
  const out = JSON.parse(r.stdout) as Record<string, { allowed: boolean; message: string | null }>;
  assert.equal(out.Fail?.allowed, false);
  assert.match(
    out.Fail?.message ?? "",
    /^ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression '.*' resulted in error: celgate's size limit: the expression would build a string of 529000000 characters/,
  );
  assert.deepEqual(out.Ignore, { allowed: true, message: null });
});
