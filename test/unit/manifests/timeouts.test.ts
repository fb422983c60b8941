/**
 * The worst wait of one request over a set of webhooks: mutating webhooks in sequence, a reinvoked
 * one twice (k8s.io/apiserver/pkg/admission/reinvocation.go runs the mutating chain at most once
 * more), validating webhooks in parallel (webhook/validating/dispatcher.go), and only webhooks whose
 * rules some one request matches together.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { WebhookRule } from "../../../src/manifests/rules.ts";
import { type TimedWebhook, worstCaseWait } from "../../../src/manifests/timeouts.ts";

const rule = (resources: string[], operations: string[] = ["CREATE"]): WebhookRule => ({
  operations: operations as WebhookRule["operations"],
  apiGroups: [""],
  apiVersions: ["v1"],
  resources,
  scope: "*",
});

const hook = (
  name: string,
  phase: "validate" | "mutate",
  timeoutSeconds: number,
  rules: WebhookRule[],
  reinvoked = false,
): TimedWebhook => ({ name, phase, timeoutSeconds, reinvoked, rules });

void test("mutating webhooks add up, a reinvoked one twice; validating ones count once, the longest", () => {
  const w = worstCaseWait([
    hook("m1", "mutate", 5, [rule(["pods"])], true),
    hook("m2", "mutate", 5, [rule(["pods"])], true),
    hook("v1", "validate", 5, [rule(["pods"])]),
    hook("v2", "validate", 7, [rule(["pods"])]),
  ]);
  assert.equal(w.seconds, 5 * 2 + 5 * 2 + 7);
  assert.deepEqual(w.webhooks, ["m1 (twice, reinvoked)", "m2 (twice, reinvoked)", "v2"]);
});

void test("webhooks no one request reaches together do not add up", () => {
  const w = worstCaseWait([
    hook("pods", "mutate", 10, [rule(["pods"])]),
    hook("deployments", "mutate", 8, [rule(["deployments"])]),
    hook("pods-update", "validate", 3, [rule(["pods"], ["UPDATE"])]),
    hook("deployments-create", "validate", 2, [rule(["deployments"])]),
  ]);
  // pods CREATE: 10 (the validating webhook for pods takes only UPDATE); pods UPDATE: 3;
  // deployments CREATE: 8 + 2.
  assert.equal(w.seconds, 10);
  assert.deepEqual(w.webhooks, ["pods"]);
  const withUpdate = worstCaseWait([
    hook("pods", "mutate", 10, [rule(["pods"], ["CREATE", "UPDATE"])]),
    hook("pods-update", "validate", 3, [rule(["pods"], ["UPDATE"])]),
  ]);
  assert.equal(withUpdate.seconds, 13);
});

void test("wildcards meet everything; no webhooks wait nothing", () => {
  const star: WebhookRule = {
    operations: ["*"],
    apiGroups: ["*"],
    apiVersions: ["*"],
    resources: ["*/*"],
    scope: "*",
  };
  assert.equal(
    worstCaseWait([hook("any", "mutate", 4, [star]), hook("pods", "mutate", 6, [rule(["pods/status"])])])
      .seconds,
    10,
  );
  assert.deepEqual(worstCaseWait([]), { seconds: 0, webhooks: [] });
});
