/** The defaulting registry: which objects get defaults, and what the caller gets back. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  applyDefaults,
  DEFAULTS_RELEASE,
  hasDefaults,
  withDefaults,
} from "../../../src/kube/defaults/index.ts";

test("the defaults modelled are Kubernetes 1.37's", () => {
  assert.equal(DEFAULTS_RELEASE, "1.37");
});

test("defaults apply by apiVersion and kind; custom resources and unknown versions are left as they are", () => {
  for (const [apiVersion, kind] of [
    ["v1", "Pod"],
    ["v1", "Service"],
    ["v1", "Namespace"],
    ["apps/v1", "Deployment"],
    ["batch/v1", "CronJob"],
    ["networking.k8s.io/v1", "NetworkPolicy"],
  ] as const)
    assert.equal(hasDefaults(apiVersion, kind), true, `${apiVersion} ${kind}`);
  for (const object of [
    { apiVersion: "example.com/v1", kind: "Pod", spec: {} },
    { apiVersion: "v2", kind: "Pod", spec: {} },
    { kind: "Pod", spec: {} },
    { apiVersion: "v1", kind: "Widget" },
  ]) {
    const copy = structuredClone(object);
    assert.deepEqual(applyDefaults(copy), []);
    assert.deepEqual(copy, object);
  }
});

test("withDefaults leaves its argument alone and lists every field it set with its value", () => {
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "d" },
    spec: { template: { spec: { containers: [] } } },
  };
  const before = structuredClone(deployment);
  const r = withDefaults(deployment);
  assert.deepEqual(deployment, before);
  assert.deepEqual(r.defaulted.slice(0, 4), [
    { path: "spec.replicas", value: 1 },
    { path: "spec.strategy.type", value: "RollingUpdate" },
    { path: "spec.strategy.rollingUpdate.maxUnavailable", value: "25%" },
    { path: "spec.strategy.rollingUpdate.maxSurge", value: "25%" },
  ]);
});
