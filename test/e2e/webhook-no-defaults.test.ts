/**
 * The webhook never applies the API server's defaults: the API server has applied them before it
 * sends a review, so `serve` evaluates the object it receives as it is, and pays nothing for
 * defaulting. The same policy and object through `celgate eval`, which builds the request itself,
 * see the defaulted object: the control that shows the webhook test can fail.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { deploymentReview, postReview, startTestWebhook, tempDir } from "../helpers/webhook.ts";
import { cli } from "../unit/cli/fake-io.ts";

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: sees-defaults.example.com}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
    - expression: "!has(object.spec.replicas) && !has(object.spec.template.spec.containers[0].imagePullPolicy)"
      message: the object carries defaults
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: sees-defaults-binding}
spec:
  policyName: sees-defaults.example.com
  validationActions: [Deny]
`;

const OBJECT = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "team-a" },
  spec: {
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
    },
  },
};

void test("serve evaluates the object as the API server sent it; eval, building the request, defaults it", {
  timeout: 30_000,
}, async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "policy.yaml"), POLICY);
  await writeFile(join(dir, "web.json"), JSON.stringify(OBJECT));
  const { port, ca } = await startTestWebhook(t, { policies: [dir] });
  const reply = await postReview(
    port,
    ca,
    "/validate",
    deploymentReview({ object: structuredClone(OBJECT) }),
  );
  assert.equal(reply.response.allowed, true, JSON.stringify(reply.response));

  const control = await cli(["eval", "-p", join(dir, "policy.yaml"), "-r", join(dir, "web.json")]);
  assert.equal(control.code, 1, control.stdout);
  assert.match(control.stdout, /denied request: the object carries defaults/);
});
