/**
 * The webhook end to end with the real engine: `startWebhook` on 127.0.0.1 over real TLS, the
 * policies in test/fixtures/webhook/policies, AdmissionReviews in both versions. Replies are
 * checked whole; patches are decoded and applied with an independent RFC 6902 implementation.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { applyJsonPatch, type PatchOperation } from "../helpers/json-patch.ts";
import {
  ADMISSION_V1,
  ADMISSION_V1BETA1,
  decodePatch,
  deployment,
  deploymentReview,
  postReview,
  type ReviewResponse,
  sampleValue,
  scrape,
  startTestWebhook,
} from "../helpers/webhook.ts";

const POLICIES = fileURLToPath(new URL("../fixtures/webhook/policies", import.meta.url));
const VERSIONS = [ADMISSION_V1, ADMISSION_V1BETA1] as const;
const TIMEOUT = { timeout: 30_000 };

const REPLICA_DENIAL = (n: number) =>
  `ValidatingAdmissionPolicy 'replica-limit.example.com' with binding 'replica-limit-binding' denied request: replicas must be at most 5, got ${n}`;
const LATEST_DENIAL =
  "ValidatingAdmissionPolicy 'no-latest.example.com' with binding 'no-latest-binding' denied request: images must not use the latest tag";
const TEAM_WARNING =
  "Validation failed for ValidatingAdmissionPolicy 'team-label.example.com' with binding 'team-label-binding': a team label is required";
const AUDIT_KEY = "replica-audit.example.com_replicas";
const FAILURE_KEY = "validation.policy.admission.k8s.io_validation_failure";

function auditFailure(): string {
  return JSON.stringify([
    {
      message: "more than 2 replicas",
      policy: "replica-audit.example.com",
      binding: "replica-audit-binding",
      expressionIndex: 0,
      validationActions: ["Audit"],
    },
  ]);
}

function withImage(obj: Record<string, unknown>, image: string): Record<string, unknown> {
  const copy = structuredClone(obj) as {
    spec: { template: { spec: { containers: { image: string }[] } } };
  };
  for (const c of copy.spec.template.spec.containers) c.image = image;
  return copy as unknown as Record<string, unknown>;
}

void test(
  "validating policies: deny, warn and audit, answered in the version received",
  TIMEOUT,
  async (t) => {
    const { port, ca } = await startTestWebhook(t, { policies: [POLICIES] });
    for (const apiVersion of VERSIONS) {
      const uid = `deny-${apiVersion}`;
      const reply = await postReview(
        port,
        ca,
        "/validate",
        deploymentReview({ apiVersion, uid, object: deployment("web", 7) }),
      );
      assert.equal(reply.apiVersion, apiVersion);
      assert.equal(reply.kind, "AdmissionReview");
      assert.deepEqual(reply.response, {
        uid,
        allowed: false,
        status: { code: 422, reason: "Invalid", message: REPLICA_DENIAL(7) },
        warnings: [TEAM_WARNING],
        auditAnnotations: {
          [AUDIT_KEY]: "Deployment spec.replicas set to 7",
          [FAILURE_KEY]: auditFailure(),
        },
      });

      const allowed = await postReview(
        port,
        ca,
        "/validate",
        deploymentReview({ apiVersion, uid: "ok", object: deployment("web", 2, { labels: { team: "a" } }) }),
      );
      assert.equal(allowed.apiVersion, apiVersion);
      assert.deepEqual(allowed.response, {
        uid: "ok",
        allowed: true,
        auditAnnotations: { [AUDIT_KEY]: "Deployment spec.replicas set to 2" },
      });
    }
  },
);

void test(
  "a denial keeps its reason's code: Forbidden is 403 with the static message",
  TIMEOUT,
  async (t) => {
    const { port, ca } = await startTestWebhook(t, { policies: [POLICIES] });
    const object = withImage(deployment("web", 1, { labels: { team: "a" } }), "nginx:latest");
    const reply = await postReview(port, ca, "/validate/fail", deploymentReview({ uid: "l", object }));
    assert.deepEqual(reply.response, {
      uid: "l",
      allowed: false,
      status: { code: 403, reason: "Forbidden", message: LATEST_DENIAL },
    });
    // Two Fail policies violated: the first in load order gives the status, as the API server does.
    const both = withImage(deployment("web", 9), "nginx:latest");
    const first = await postReview(port, ca, "/validate/fail", deploymentReview({ uid: "b", object: both }));
    assert.equal(first.response.allowed, false);
    assert.equal(first.response.status?.message, LATEST_DENIAL);
  },
);

void test("the split validate paths evaluate only their failurePolicy's policies", TIMEOUT, async (t) => {
  const { port, ca } = await startTestWebhook(t, { policies: [POLICIES] });
  // Violates all four validating policies: two Fail (Deny), one Ignore (Warn), one Ignore (Audit).
  const object = withImage(deployment("web", 8), "nginx:latest");
  for (const apiVersion of VERSIONS) {
    const fail = await postReview(
      port,
      ca,
      "/validate/fail",
      deploymentReview({ apiVersion, uid: "f", object }),
    );
    assert.deepEqual(fail.response, {
      uid: "f",
      allowed: false,
      status: { code: 403, reason: "Forbidden", message: LATEST_DENIAL },
    });
    const ignore = await postReview(
      port,
      ca,
      "/validate/ignore",
      deploymentReview({ apiVersion, uid: "i", object }),
    );
    assert.deepEqual(ignore.response, {
      uid: "i",
      allowed: true,
      warnings: [TEAM_WARNING],
      auditAnnotations: {
        [AUDIT_KEY]: "Deployment spec.replicas set to 8",
        [FAILURE_KEY]: auditFailure(),
      },
    });
  }
});

void test("validate paths never carry a patch, though mutating policies match", TIMEOUT, async (t) => {
  const { port, ca } = await startTestWebhook(t, { policies: [POLICIES] });
  for (const path of ["/validate", "/validate/fail", "/validate/ignore"]) {
    for (const operation of ["CREATE", "UPDATE"] as const) {
      const object = deployment("web", 1, { labels: { team: "a" } });
      const review = deploymentReview({
        operation,
        object,
        ...(operation === "UPDATE" ? { oldObject: object } : {}),
      });
      const { response } = await postReview(port, ca, path, review);
      assert.equal(response.allowed, true, `${path} ${operation}`);
      assert.equal("patch" in response, false, `${path} ${operation}`);
      assert.equal("patchType" in response, false, `${path} ${operation}`);
    }
  }
});

/** What each mutate path must change, on top of the object it was given. */
const MUTATE_PATHS = [
  { path: "/mutate", label: true, seen: true },
  { path: "/mutate/fail", label: true, seen: false },
  { path: "/mutate/ignore", label: false, seen: true },
] as const;

const MUTATE_OBJECTS: readonly { name: string; object: Record<string, unknown> }[] = [
  { name: "bare", object: deployment("bare", 1) },
  {
    name: "labels and annotations",
    object: deployment("full", 1, { labels: { team: "a" }, annotations: { x: "y" } }),
  },
  {
    name: "label already set, pull policy set",
    object: (() => {
      const o = deployment("set", 2, { labels: { "app.kubernetes.io/managed-by": "someone-else" } }) as {
        spec: { template: { spec: { containers: Record<string, unknown>[] } } };
      };
      const c = o.spec.template.spec.containers[0];
      if (c) c.imagePullPolicy = "Always";
      return o as unknown as Record<string, unknown>;
    })(),
  },
];

function expectedAfter(object: Record<string, unknown>, label: boolean, seen: boolean): unknown {
  const out = structuredClone(object) as {
    metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: { template: { spec: { containers: Record<string, unknown>[] } } };
  };
  if (label) out.metadata.labels = { ...out.metadata.labels, "app.kubernetes.io/managed-by": "celgate" };
  if (seen) {
    out.metadata.annotations = { ...out.metadata.annotations, "celgate.example.com/seen": "true" };
    const c = out.spec.template.spec.containers[0];
    if (c) c.imagePullPolicy = "IfNotPresent";
  }
  return out;
}

function patchOf(response: ReviewResponse, what: string): PatchOperation[] {
  assert.equal(response.allowed, true, what);
  assert.equal(response.patchType, "JSONPatch", what);
  const ops = decodePatch(response);
  assert.ok(ops !== undefined && ops.length > 0, `${what}: empty patch`);
  return ops as PatchOperation[];
}

void test(
  "mutations: the patch applies (independent RFC 6902) and a second pass is a no-op",
  TIMEOUT,
  async (t) => {
    const { port, ca } = await startTestWebhook(t, { policies: [POLICIES] });
    for (const apiVersion of VERSIONS) {
      for (const { path, label, seen } of MUTATE_PATHS) {
        for (const { name, object } of MUTATE_OBJECTS) {
          for (const operation of ["CREATE", "UPDATE"] as const) {
            const what = `${apiVersion} ${path} ${operation} ${name}`;
            const oldObject = operation === "UPDATE" ? deployment("old", 1) : null;
            const uid = `m-${name}`;
            const first = await postReview(
              port,
              ca,
              path,
              deploymentReview({ apiVersion, uid, operation, object, oldObject }),
            );
            assert.equal(first.apiVersion, apiVersion, what);
            assert.equal(first.response.uid, uid, what);
            const patched = applyJsonPatch(object, patchOf(first.response, what));
            assert.deepEqual(patched, expectedAfter(object, label, seen), what);

            const again = await postReview(
              port,
              ca,
              path,
              deploymentReview({
                apiVersion,
                uid: `${uid}-again`,
                operation,
                object: patched as Record<string, unknown>,
                oldObject,
              }),
            );
            assert.deepEqual(again.response, { uid: `${uid}-again`, allowed: true }, `${what}: second pass`);
          }
        }
      }
    }
  },
);

void test(
  "DELETE gets no patch on any mutate path, even with an object in the request",
  TIMEOUT,
  async (t) => {
    const { port, ca } = await startTestWebhook(t, { policies: [POLICIES] });
    const old = deployment("web", 1);
    for (const apiVersion of VERSIONS) {
      for (const { path } of MUTATE_PATHS) {
        const del = await postReview(
          port,
          ca,
          path,
          deploymentReview({ apiVersion, uid: "d", operation: "DELETE", object: null, oldObject: old }),
        );
        assert.deepEqual(del.response, { uid: "d", allowed: true }, `${apiVersion} ${path} DELETE`);
        // A DELETE whose body the API server filled in anyway (DeleteOptions-carrying clients) still gets none.
        const delWithObject = await postReview(
          port,
          ca,
          path,
          deploymentReview({ apiVersion, uid: "d2", operation: "DELETE", object: old, oldObject: old }),
        );
        assert.deepEqual(
          delWithObject.response,
          { uid: "d2", allowed: true },
          `${apiVersion} ${path} DELETE+object`,
        );
      }
    }
  },
);

void test("the metrics count the real outcomes and per-policy evaluations", TIMEOUT, async (t) => {
  const { webhook, port, ca } = await startTestWebhook(t, { policies: [POLICIES] });
  await postReview(port, ca, "/validate", deploymentReview({ object: deployment("web", 7) }));
  await postReview(port, ca, "/mutate", deploymentReview({ object: deployment("web", 1) }));
  await postReview(port, ca, "/validate/ignore", deploymentReview({ object: deployment("web", 1) }));
  const text = await scrape(webhook.metricsUrl);
  const requests = (path: string, outcome: string) =>
    sampleValue(text, "celgate_admission_requests_total", { path, operation: "CREATE", outcome });
  assert.equal(requests("/validate", "denied"), 1);
  assert.equal(requests("/mutate", "patched"), 1);
  assert.equal(requests("/validate/ignore", "allowed"), 1);
  const evaluations = (policy: string, outcome: string) =>
    sampleValue(text, "celgate_policy_evaluations_total", { policy, outcome });
  assert.equal(evaluations("replica-limit.example.com", "fail"), 1);
  assert.equal(evaluations("no-latest.example.com", "pass"), 1);
  // /validate/ignore evaluated the Ignore policies only: no pass for the Fail ones.
  assert.equal(evaluations("replica-limit.example.com", "pass"), undefined);
  assert.equal(evaluations("replica-audit.example.com", "fail"), 1);
  assert.equal(evaluations("replica-audit.example.com", "pass"), 1);
  assert.equal(
    sampleValue(text, "celgate_policies_loaded", { kind: "ValidatingAdmissionPolicy", enforced: "true" }),
    4,
  );
  assert.equal(
    sampleValue(text, "celgate_policies_loaded", { kind: "MutatingAdmissionPolicy", enforced: "true" }),
    2,
  );
});
