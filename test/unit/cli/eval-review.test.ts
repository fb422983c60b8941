/**
 * `celgate eval -r review.json`: a saved AdmissionReview is evaluated as `serve` evaluates the review
 * it is sent, not as a resource of kind AdmissionReview: its request's own namespace, user,
 * operation, dryRun and options, its objects without offline defaulting, decoded by the webhook's
 * codec, so a review serve refuses (HTTP 400) is refused with the same reason. Checked against a real
 * `serve` over TLS on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ResourceReport } from "../../../src/adapters/output/entries.ts";
import { send } from "../../helpers/https.ts";
import { postReview, startTestWebhook } from "../../helpers/webhook.ts";
import { cli, removeTree, tempTree } from "./fake-io.ts";

/** Holds only for the request exactly as the review gives it; a second policy shows the object was not defaulted. */
const POLICIES = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: as-sent}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["*"], resources: ["pods"]}]
  validations:
    - expression: >-
        request.namespace == 'team-b' && request.name == 'web' && request.operation == 'UPDATE' &&
        request.userInfo.username == 'bob' && request.userInfo.groups == ['admins'] &&
        request.dryRun == true && request.options.kind == 'UpdateOptions' &&
        object.metadata.?namespace.orValue('') == '' && oldObject.spec.containers.size() == 1
      messageExpression: "'saw ' + request.namespace + '/' + request.userInfo.username + ' ' + request.operation"
    - expression: "!has(object.spec.dnsPolicy) && !has(object.spec.containers[0].imagePullPolicy)"
      message: the object was defaulted
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: as-sent}
spec: {policyName: as-sent, validationActions: [Deny]}
`;

function review(apiVersion: string, request: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion,
    kind: "AdmissionReview",
    request: {
      uid: "r-1",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      name: "web",
      namespace: "team-b",
      operation: "UPDATE",
      userInfo: { username: "bob", groups: ["admins"] },
      object: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "a", image: "a:1" }] },
      },
      oldObject: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "a", image: "a:0" }] },
      },
      dryRun: true,
      options: { apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions" },
      ...request,
    },
  };
}

let dir = "";
const path = (name: string) => join(dir, name);
before(async () => {
  dir = await tempTree({
    "policies.yaml": POLICIES,
    "v1.json": JSON.stringify(review("admission.k8s.io/v1")),
    "v1beta1.json": JSON.stringify(review("admission.k8s.io/v1beta1")),
    "other-user.json": JSON.stringify(review("admission.k8s.io/v1", { userInfo: { username: "eve" } })),
    "no-uid.json": JSON.stringify(review("admission.k8s.io/v1", { uid: undefined })),
    "bad-operation.json": JSON.stringify(review("admission.k8s.io/v1", { operation: "PATCH" })),
    "v2.json": JSON.stringify(review("admission.k8s.io/v2")),
    "pod.yaml":
      "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: a:1}]}\n",
  });
});
after(() => removeTree(dir));

test("a v1 and a v1beta1 review: the request as the review gives it, the objects as sent", async () => {
  for (const file of ["v1.json", "v1beta1.json"]) {
    const r = await cli(["eval", "-p", path("policies.yaml"), "-r", path(file), "-o", "json"]);
    assert.equal(r.code, 0, `${file}: ${r.stdout}${r.stderr}`);
    const out = JSON.parse(r.stdout) as ResourceReport[];
    assert.deepEqual(out[0]?.resource, { apiVersion: "v1", kind: "Pod", namespace: "team-b", name: "web" });
    assert.equal(out[0]?.results[0]?.outcome, "pass");
  }
  const denied = await cli(["eval", "-p", path("policies.yaml"), "-r", path("other-user.json")]);
  assert.equal(denied.code, 1);
  assert.match(denied.stdout, /saw team-b\/eve UPDATE/);
});

test("a review serve refuses is refused with serve's reason", async (t) => {
  const { port, ca } = await startTestWebhook(t, { policies: [path("policies.yaml")] });
  for (const file of ["no-uid.json", "bad-operation.json", "v2.json"]) {
    const body = JSON.parse(
      JSON.stringify(
        file === "no-uid.json"
          ? review("admission.k8s.io/v1", { uid: undefined })
          : file === "bad-operation.json"
            ? review("admission.k8s.io/v1", { operation: "PATCH" })
            : review("admission.k8s.io/v2"),
      ),
    );
    const served = await send({ port, ca, path: "/validate", body, timeoutMs: 10_000 });
    assert.equal(served.status, 400, file);
    const reason = (JSON.parse(served.body) as { message: string }).message;
    const r = await cli(["eval", "-p", path("policies.yaml"), "-r", path(file)]);
    assert.equal(r.code, 2, file);
    assert.ok(
      r.stderr.includes(`an AdmissionReview that serve refuses (HTTP 400): ${reason}`),
      `${file}: serve said ${reason}; eval said ${r.stderr}`,
    );
  }
  // And the one serve answers, eval answers the same way.
  const served = await postReview(
    port,
    ca,
    "/validate",
    review("admission.k8s.io/v1", { userInfo: { username: "eve" } }),
  );
  assert.equal(served.response.allowed, false);
  const r = await cli(["eval", "-p", path("policies.yaml"), "-r", path("other-user.json")]);
  assert.ok(r.stdout.includes(`denied: ${served.response.status?.message}`), r.stdout);
});

test("flags that build a request from a resource cannot be given with a review", async () => {
  for (const flags of [
    ["--operation", "DELETE"],
    ["--user", "x"],
    ["--groups", "g"],
    ["--subresource", "status"],
  ]) {
    const r = await cli(["eval", "-p", path("policies.yaml"), "-r", path("v1.json"), ...flags]);
    assert.equal(r.code, 2, flags.join(" "));
    assert.match(r.stderr, /cannot be given with an AdmissionReview: the review's request says what it is/);
  }
  // A plain resource beside the review is still built from the flags it is given with.
  const both = await cli([
    "eval",
    "-p",
    path("policies.yaml"),
    "-r",
    path("v1.json"),
    "-r",
    path("pod.yaml"),
  ]);
  assert.equal(both.code, 1, both.stderr);
  assert.match(both.stdout, /saw default\/celgate CREATE/);
});
