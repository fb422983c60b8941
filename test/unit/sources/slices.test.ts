/**
 * A reload parses and compiles in slices (issue 37 item 8): the event loop turns between files and
 * between policies, so a server reloading a large set goes on answering. Counted in turns of the
 * event loop taken while the set is parsed and compiled, never in times.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { slicer } from "../../../src/sources/slices.ts";
import { loadSnapshot } from "../../../src/sources/store.ts";

const POLICIES = 150;

function policy(i: number): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p${i}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= ${i} && object.metadata.name.startsWith('p') && has(object.spec.template)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: p${i}
spec:
  policyName: p${i}
  validationActions: [Deny]
`;
}

async function policyDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "celgate-slices-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (let i = 0; i < POLICIES; i++) await writeFile(join(dir, `p${i}.yaml`), policy(i));
  return dir;
}

/** Turns of the event loop (setImmediate) between the files' read and the end of the load. */
async function turnsDuringLoad(dir: string, sliced: boolean): Promise<{ turns: number; policies: number }> {
  let turns = 0;
  let counting = false;
  const tick = (): void => {
    if (!counting) return;
    turns++;
    setImmediate(tick);
  };
  const outcome = await loadSnapshot(
    [dir],
    {},
    {
      hooks: {
        afterRead: () => {
          counting = true;
          setImmediate(tick);
        },
      },
      // A slice of 0 ms: every file and every policy yields, whatever the machine's speed.
      ...(sliced ? { pause: slicer(0) } : {}),
    },
  );
  counting = false;
  assert.ok(outcome.ok);
  return { turns, policies: outcome.snapshot.set.policies.length };
}

void test("a sliced load lets the event loop turn between files and between policies, and loads the same set", async (t) => {
  const dir = await policyDir(t);
  const whole = await turnsDuringLoad(dir, false);
  const sliced = await turnsDuringLoad(dir, true);
  assert.equal(whole.policies, POLICIES);
  assert.equal(sliced.policies, POLICIES);
  // In one block, nothing else runs between the read and the end; in slices, at least one turn
  // per file parsed and per policy compiled.
  assert.equal(whole.turns, 0);
  assert.ok(sliced.turns >= 2 * POLICIES, `only ${sliced.turns} turns`);
});

void test("the pacer yields only once its slice is used up", async () => {
  const pause = slicer(60_000);
  assert.equal(pause(), undefined);
  const always = slicer(0);
  const p = always();
  assert.ok(p instanceof Promise);
  await p;
});
