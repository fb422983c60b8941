/**
 * Numbers in a review read as the API server's JSON decoder reads them (issue 36 item 5, "Integers
 * lose precision"). The API server decodes objects with sigs.k8s.io/json's PreserveInts
 * (sigs.k8s.io/json json.go, internal/golang/encoding/json/kubernetes_patch.go; the same rule as
 * k8s.io/apimachinery/pkg/util/json/json.go convertNumber): a number is an int64 when its text has
 * no `.` or exponent, parses as an integer and fits in int64; otherwise a float64, and beyond
 * float64's range a decoding error. JSON.parse made 9007199254740993 into 9007199254740992, int64's
 * bounds into doubles, and `1.0` into an int.
 *
 * A JSONPatch value is written as cel-go writes a CEL value as JSON (common/types/int.go,
 * ConvertToNative to structpb.Value, which the API server's MAP uses in
 * admission/plugin/policy/mutating/patch/json_patch.go): an int beyond ±(2^53-1) as a decimal
 * string, which must hold the same digits; a JSONPatch `copy` moves the number itself.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { send } from "../helpers/https.ts";
import { postReview, startTestWebhook, tempDir } from "../helpers/webhook.ts";

const TIMEOUT = { timeout: 60_000 };

/** One validation per reading; each message names what was read wrong. */
const CHECKS: readonly (readonly [string, string])[] = [
  ["object.spec.a == 9007199254740993", "2^53+1 is not read exactly"],
  ["object.spec.a != 9007199254740992", "2^53+1 reads as 2^53"],
  ["type(object.spec.max) == int && object.spec.max == 9223372036854775807", "int64 max is not an int"],
  ["type(object.spec.min) == int && object.spec.min == -9223372036854775807 - 1", "int64 min is not an int"],
  ["type(object.spec.over) == double && object.spec.over == 9223372036854775808.0", "2^63 is not a double"],
  ["type(object.spec.x) == double && object.spec.x == 1.0", "1.0 is not a double"],
  ["type(object.spec.e) == double && object.spec.e == 1000.0", "1e3 is not a double"],
  ["type(object.spec.negZero) == int && object.spec.negZero == 0", "-0 is not an int"],
  ["type(object.spec.half) == double", "0.5 is not a double"],
  ["type(object.spec.small) == int && object.spec.small == 3", "3 is not an int"],
  ["object.spec.list[0] == 9007199254740993 && type(object.spec.list[1]) == double", "a list's numbers"],
  [
    "object.spec.list.exists(v, type(v) == double) && object.spec.list.all(v, v != 9007199254740992)",
    "a comprehension's numbers",
  ],
  ["object.spec.map.k == 1.0 && type(object.spec.map.k) == double", "a nested map's 1.0"],
];

const VALIDATING = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: numbers }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - { apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"] }
  validations:
${CHECKS.map(([e, m]) => `    - expression: ${JSON.stringify(e)}\n      message: ${JSON.stringify(m)}`).join("\n")}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: numbers }
spec:
  policyName: numbers
  validationActions: [Deny]
`;

const MUTATING = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: { name: copy-numbers }
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
      - { apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"] }
  mutations:
    - patchType: JSONPatch
      jsonPatch:
        expression: >-
          [JSONPatch{op: "add", path: "/spec/valueCopy", value: object.spec.a},
           JSONPatch{op: "copy", from: "/spec/a", path: "/spec/opCopy"},
           JSONPatch{op: "add", path: "/spec/maxCopy", value: object.spec.max}]
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: { name: copy-numbers }
spec:
  policyName: copy-numbers
`;

const SPEC =
  '{"a":9007199254740993,"max":9223372036854775807,"min":-9223372036854775808,"over":9223372036854775808,' +
  '"x":1.0,"e":1e3,"negZero":-0,"half":0.5,"small":3,"list":[9007199254740993,2.0],"map":{"k":1.0}}';

/** A CREATE review of a Widget whose spec is `spec`, as text (JSON.stringify cannot write these numbers). */
function widgetReview(uid: string, spec: string): string {
  return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"namespace":"team-a","name":"w","operation":"CREATE","userInfo":{"username":"alice"},"object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"team-a"},"spec":${spec}}}}`;
}

void test("a review's numbers are read as the API server's decoder reads them", TIMEOUT, async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "numbers.yaml"), VALIDATING);
  const { port, ca } = await startTestWebhook(t, { policies: [dir] });
  const reply = await postReview(port, ca, "/validate", widgetReview("u-1", SPEC));
  assert.equal(reply.response.status?.message, undefined);
  assert.equal(reply.response.allowed, true);

  // The checks can fail: the same numbers written as JSON.parse would read them are denied.
  const rounded = SPEC.replace(/9007199254740993/g, "9007199254740992").replace('"x":1.0', '"x":1');
  const denied = await postReview(port, ca, "/validate", widgetReview("u-2", rounded));
  assert.equal(denied.response.allowed, false);
  assert.match(denied.response.status?.message ?? "", /2\^53\+1 is not read exactly/);
});

void test(
  "a number beyond float64's range is refused, as the API server's decoder refuses it",
  TIMEOUT,
  async (t) => {
    const dir = await tempDir(t);
    await writeFile(join(dir, "numbers.yaml"), VALIDATING);
    const { port, ca } = await startTestWebhook(t, { policies: [dir] });
    const res = await send({
      port,
      ca,
      path: "/validate",
      body: widgetReview("u-3", '{"a":1e400}'),
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 400);
    assert.match(res.body, /number 1e400 is beyond the range of a float64/);
    assert.doesNotMatch(res.body, /internal error/i);
  },
);

void test("a JSONPatch that copies a big integer writes the same digits", TIMEOUT, async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "copy.yaml"), MUTATING);
  const { port, ca } = await startTestWebhook(t, { policies: [dir] });
  const reply = await postReview(port, ca, "/mutate", widgetReview("u-4", SPEC));
  assert.equal(reply.response.allowed, true);
  const text = Buffer.from(reply.response.patch ?? "", "base64").toString("utf8");
  // A value: cel-go's JSON value of an int beyond 2^53 is its decimal string.
  assert.match(text, /"path":"\/spec\/valueCopy","value":"9007199254740993"/);
  assert.match(text, /"path":"\/spec\/maxCopy","value":"9223372036854775807"/);
  // A copy: the number itself, as a number, whichever form the op is written in.
  assert.match(
    text,
    /"op":"copy","path":"\/spec\/opCopy","from":"\/spec\/a"|"path":"\/spec\/opCopy","value":9007199254740993[,}]/,
  );
  assert.doesNotMatch(text, /9007199254740992/);
});
