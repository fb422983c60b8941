/**
 * The admission chain (src/engine/admit.ts) and the one enforcement step (src/engine/decision.ts).
 * Upstream: kubernetes pkg/kubeapiserver/options/plugins.go (AllOrderedPlugins runs
 * MutatingAdmissionPolicy before ValidatingAdmissionPolicy, so validations see what the mutations
 * made) and staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go
 * (Deny denies, Warn warns, Audit annotates, the first denial gives the status).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { stringify as yamlStringify } from "yaml";
import { createAdmitter } from "../../../src/adapters/server/admitter.ts";
import { ReplSession } from "../../../src/adapters/repl/session.ts";
import { admit } from "../../../src/engine/admit.ts";
import { contextFromSet } from "../../../src/engine/context.ts";
import { decide } from "../../../src/engine/decision.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import { cli, removeTree, tempTree } from "../cli/fake-io.ts";
import {
  compileText,
  FAR,
  map,
  mapBinding,
  podObject,
  podRequest,
  vap,
  vapBinding,
  yamlDocs,
} from "../../helpers/engine.ts";

/** A mutation that labels every Pod, a Deny policy that needs the label, and a Warn policy on the image. */
const POLICIES = yamlDocs(
  map("add-team", {
    mutations: [
      {
        patchType: "ApplyConfiguration",
        applyConfiguration: { expression: "Object{metadata: Object.metadata{labels: {'team': 'web'}}}" },
      },
    ],
  }),
  mapBinding("add-team", "add-team"),
  vap("needs-team", {
    validations: [
      {
        expression: "has(object.metadata.labels) && 'team' in object.metadata.labels",
        message: "a team label is required",
      },
      {
        expression: "object.spec.replicas <= 2",
        messageExpression: "'at most 2 replicas, got ' + string(object.spec.replicas)",
      },
    ],
  }),
  vapBinding("needs-team", "needs-team"),
  vap("no-latest", {
    validations: [{ expression: "!object.spec.image.endsWith(':latest')", message: "pin the image" }],
  }),
  vapBinding("no-latest", "no-latest", { validationActions: ["Warn"] }),
);

const set = compileText(POLICIES);
const ctx = contextFromSet(set);
const pod = (spec: Record<string, unknown>) => podRequest(podObject(spec));

test("the chain runs the mutations first and the validations on what they made", () => {
  const request = pod({ replicas: 1, image: "app:1.0" });
  const chain = admit(set, request, ctx, { deadline: FAR() });
  assert.deepEqual(
    chain.results.map((r) => [r.policyKind, r.policy, r.outcome]),
    [
      ["MutatingAdmissionPolicy", "add-team", "pass"],
      ["ValidatingAdmissionPolicy", "needs-team", "pass"],
      ["ValidatingAdmissionPolicy", "no-latest", "pass"],
    ],
  );
  assert.deepEqual((chain.patchedObject as { metadata: { labels: unknown } }).metadata.labels, {
    team: "web",
  });
  assert.equal(decide(chain).allowed, true);
  // The validating phase alone sees the object as it came, without the label.
  const alone = decide(admit(set, request, ctx, { deadline: FAR(), phase: "validate" }));
  assert.equal(alone.allowed, false);
  assert.match(alone.status?.message ?? "", /a team label is required/);
});

test("one phase: mutate evaluates only mutating policies, validate only validating ones", () => {
  const request = pod({ replicas: 1, image: "app:1.0" });
  const mutated = admit(set, request, ctx, { deadline: FAR(), phase: "mutate" });
  assert.deepEqual(
    mutated.results.map((r) => r.policyKind),
    ["MutatingAdmissionPolicy"],
  );
  assert.ok(mutated.patch && mutated.patch.length > 0);
  const validated = admit(set, request, ctx, { deadline: FAR(), phase: "validate" });
  assert.deepEqual(
    validated.results.map((r) => r.policyKind),
    ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicy"],
  );
  assert.equal(validated.patch, undefined);
});

test("the engine's answer holds no verdict; decide enforces Deny, Warn and Audit on it", () => {
  const chain = admit(set, pod({ replicas: 3, image: "app:latest" }), ctx, { deadline: FAR() });
  assert.deepEqual(Object.keys(chain).sort(), ["patch", "patchedObject", "results"]);
  const failed = chain.results.filter((r) => r.outcome === "fail");
  assert.deepEqual(
    failed.map((r) => [r.policy, r.validationActions, r.violations.map((v) => v.message)]),
    [
      ["needs-team", ["Deny"], ["at most 2 replicas, got 3"]],
      ["no-latest", ["Warn"], ["pin the image"]],
    ],
  );
  const d = decide(chain);
  assert.equal(d.allowed, false);
  assert.equal(
    d.status?.message,
    "ValidatingAdmissionPolicy 'needs-team' with binding 'needs-team' denied request: at most 2 replicas, got 3",
  );
  assert.deepEqual(d.warnings, [
    "Validation failed for ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest': pin the image",
  ]);
});

// ---- every edge decides the same way -----------------------------------------------------------

const OBJECT = podObject({ replicas: 3, image: "app:latest" });
let dir = "";

before(async () => {
  dir = await tempTree({
    "policies/all.yaml": POLICIES,
    "pod.yaml": yamlStringify(OBJECT),
  });
});
after(() => removeTree(dir));

/** What the webhook answers: the mutating call, then the validating call on the patched object. */
function webhook(): AdmissionDecision {
  const admitter = createAdmitter(set, ctx);
  const request = podRequest(OBJECT);
  const mutated = admitter.review(request, { phase: "mutate", deadline: FAR() });
  const object = (mutated.patchedObject ?? request.object) as typeof request.object;
  return admitter.review({ ...request, object }, { phase: "validate", deadline: FAR() });
}

test("serve, eval, test and the REPL give the same denial and warnings", async () => {
  const d = webhook();
  const denial = d.status?.message ?? "";
  assert.match(denial, /at most 2 replicas, got 3/);
  const warning = d.warnings[0] ?? "";
  assert.match(warning, /pin the image/);

  const evaluated = await cli(["eval", "-p", join(dir, "policies"), "-r", join(dir, "pod.yaml")]);
  assert.equal(evaluated.code, 1);
  assert.ok(evaluated.stdout.includes(`denied: ${denial}`), evaluated.stdout);
  assert.ok(evaluated.stdout.includes(warning), evaluated.stdout);

  const suite = yamlStringify({
    apiVersion: "celgate.dev/v1alpha1",
    kind: "PolicyTest",
    policies: ["policies"],
    cases: [
      {
        name: "the webhook's answer",
        objectFile: "pod.yaml",
        expect: { allowed: false, message: denial, warnings: [warning] },
      },
    ],
  });
  await writeFile(join(dir, "agree.test.yaml"), suite);
  const tested = await cli(["test", join(dir, "agree.test.yaml")]);
  assert.equal(tested.code, 0, tested.stdout + tested.stderr);

  const repl = new ReplSession({ cwd: dir });
  assert.equal((await repl.handle(":object pod.yaml")).error, false);
  const shown = await repl.handle(":policy policies");
  assert.ok(shown.text.includes(`denied: ${denial}`), shown.text);
  assert.ok(shown.text.includes(warning), shown.text);
});

// ---- the evaluator knows nothing of enforcement ------------------------------------------------

function importers(of: string): string[] {
  const root = new URL("../../../src/", import.meta.url);
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(new URL(rel, root), { withFileTypes: true })) {
      const path = `${rel}${e.name}`;
      if (e.isDirectory()) walk(`${path}/`);
      else if (e.name.endsWith(".ts")) {
        const text = readFileSync(new URL(path, root), "utf8");
        if (new RegExp(`from "[./]*${of.replace(/[/.]/g, "\\$&")}"`).test(text)) out.push(path);
      }
    }
  };
  walk("");
  return out.sort();
}

test("only the edges that answer call the enforcement step; no evaluator module does", () => {
  assert.deepEqual(importers("engine/decision.ts").concat(importers("decision.ts")).sort(), [
    "adapters/cli/commands/eval.ts",
    "adapters/cli/replay/answer.ts",
    "adapters/repl/policies.ts",
    "adapters/server/admitter.ts",
    "index.ts",
    "suite/run.ts",
  ]);
});
