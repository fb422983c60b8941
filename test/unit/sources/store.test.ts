/**
 * The policy store's reloads: what was loaded is known by the bytes read, a change during a load is
 * loaded again, a reload asked for during another runs after it, a reload that would remove objects
 * waits until the files read the same twice, and a file that does not parse keeps the last good
 * set. Races are driven through the loader's `afterRead` seam and a clock the test moves, not by
 * sleeping.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import {
  DEFAULT_SETTLE_MS,
  PolicyStore,
  type PolicyStoreOptions,
  type ReloadOutcome,
  type ReportedOutcome,
} from "../../../src/sources/store.ts";
import { ConfigMapVolume, type VolumeStep } from "../../helpers/configmap-volume.ts";

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "celgate-store-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A Deny policy capping replicas, and its binding. */
function policy(name: string, limit: number): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= ${limit}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}-binding
spec:
  policyName: ${name}
  validationActions: [Deny]
`;
}

/** The limit the serving set enforces for `name`, read back from the compiled policy. */
function limitOf(store: PolicyStore, name: string): number | undefined {
  const p = store.current().set.policies.find((q) => q.name === name);
  if (p === undefined || p.policy.kind !== "ValidatingAdmissionPolicy") return undefined;
  const m = /<= (\d+)/.exec(p.policy.validations[0]?.expression ?? "");
  return m ? Number(m[1]) : undefined;
}

const names = (store: PolicyStore): string[] => store.current().set.policies.map((p) => p.name);

interface Opened {
  readonly store: PolicyStore;
  readonly reported: ReportedOutcome[];
  /** The clock the store reads; tests move it. */
  readonly clock: { now: number };
}

async function open(
  t: TestContext,
  paths: readonly string[],
  options: Partial<PolicyStoreOptions> = {},
): Promise<Opened> {
  const reported: ReportedOutcome[] = [];
  const clock = { now: 0 };
  const opened = await PolicyStore.open(paths, {
    settleMs: 1000,
    now: () => clock.now,
    onReload: (o) => reported.push(o),
    ...options,
  });
  if (!("store" in opened)) throw new Error(`open failed: ${JSON.stringify(opened.diagnostics)}`);
  t.after(() => opened.store.close());
  return { store: opened.store, reported, clock };
}

function status(o: ReloadOutcome): string {
  return o.status;
}

void test("a write that lands between the loader's read and the end of the load is loaded too (issue 28 item 1)", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("cap", 5));
  let loads = 0;
  const { store } = await open(t, [dir], {
    loadHooks: {
      // The first reload reads limit 3; before it parses, the file already says 2.
      afterRead: async () => {
        loads++;
        if (loads === 1) await writeFile(file, policy("cap", 2));
      },
    },
  });
  await writeFile(file, policy("cap", 3));
  const outcome = await store.reload();
  assert.equal(outcome.status, "applied");
  assert.equal(limitOf(store, "cap"), 2, "the store serves content older than the files");
  assert.equal(loads, 2, "the reload must load again once it sees the files changed under it");
  // And nothing is left for the watcher to find: a further reload finds nothing new.
  assert.equal(status(await store.reload()), "unchanged");
});

void test("a reload asked for while one runs gets a load of its own after it, not the one already going", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("cap", 5));
  let loads = 0;
  let second: Promise<ReloadOutcome> | undefined;
  const { store } = await open(t, [dir], {
    loadHooks: {
      afterRead: () => {
        loads++;
        // A watcher event arrives while the first load parses; the file did not change again.
        if (loads === 1) second = store.reload();
      },
    },
  });
  await writeFile(file, policy("cap", 3));
  const first = store.reload();
  const firstOutcome = await first;
  assert.ok(second !== undefined);
  assert.notEqual(second, first, "the second request shared the load that had already read the files");
  assert.equal(firstOutcome.status, "applied");
  assert.equal(status(await second), "unchanged");
  assert.equal(loads, 2);
  assert.equal(limitOf(store, "cap"), 3);
});

void test("an emptied file is held back, reported once, and the last good set keeps serving (issue 28 item 2)", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("cap", 5));
  const { store, reported, clock } = await open(t, [dir]);

  await writeFile(file, "");
  const held = await store.reload();
  assert.equal(held.status, "held");
  assert.ok(held.status === "held");
  assert.deepEqual(
    held.removed.map((e) => `${e.key} ${e.file}`),
    [`ValidatingAdmissionPolicy/cap ${file}`, `ValidatingAdmissionPolicyBinding/cap-binding ${file}`],
  );
  assert.equal(held.settleMs, 1000);
  assert.deepEqual(names(store), ["cap"]);
  assert.deepEqual(reported.map(status), ["held"]);

  // Read again before it settled: still held, not reported twice.
  clock.now += 999;
  assert.equal(status(await store.reload()), "held");
  assert.deepEqual(names(store), ["cap"]);
  assert.deepEqual(reported.map(status), ["held"]);

  // The editor writes the file back (with a change): applied at once, nothing was ever dropped.
  await writeFile(file, policy("cap", 4));
  const applied = await store.reload();
  assert.equal(applied.status, "applied");
  assert.ok(applied.status === "applied");
  assert.deepEqual(
    applied.changes.changed.map((e) => e.key),
    ["ValidatingAdmissionPolicy/cap"],
  );
  assert.deepEqual(applied.changes.removed, []);
  assert.equal(limitOf(store, "cap"), 4);
  assert.deepEqual(reported.map(status), ["held", "applied"]);
});

void test("an empty file that stays empty is applied once it reads the same twice, settleMs apart", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("cap", 5));
  await writeFile(join(dir, "other.yaml"), policy("other", 1));
  const { store, reported, clock } = await open(t, [dir]);
  await writeFile(file, "");
  assert.equal(status(await store.reload()), "held");
  clock.now += 1000;
  const applied = await store.reload();
  assert.equal(applied.status, "applied");
  assert.ok(applied.status === "applied");
  assert.deepEqual(
    applied.changes.removed.map((e) => e.key),
    ["ValidatingAdmissionPolicy/cap", "ValidatingAdmissionPolicyBinding/cap-binding"],
  );
  assert.deepEqual(names(store), ["other"]);
  assert.deepEqual(reported.map(status), ["held", "applied"]);
});

void test("bytes that differ between the two reads restart the wait", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("a", 5) + "---\n" + policy("b", 5));
  const { store, reported, clock } = await open(t, [dir]);
  await writeFile(file, policy("a", 5));
  assert.equal(status(await store.reload()), "held");
  clock.now += 800;
  // Still losing `b`, but other bytes: a new first read.
  await writeFile(file, policy("a", 6));
  assert.equal(status(await store.reload()), "held");
  clock.now += 800;
  assert.equal(status(await store.reload()), "held", "1600 ms since the first read, 800 since these bytes");
  assert.deepEqual(names(store), ["a", "b"]);
  clock.now += 200;
  assert.equal(status(await store.reload()), "applied");
  assert.deepEqual(names(store), ["a"]);
  assert.equal(limitOf(store, "a"), 6);
  assert.deepEqual(reported.map(status), ["held", "held", "applied"]);
});

void test("a policy's document taken out of a file that still parses is applied once stable", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("keep", 5) + "---\n" + policy("drop", 5));
  const { store, clock } = await open(t, [dir]);
  await writeFile(file, policy("keep", 5));
  const held = await store.reload();
  assert.ok(held.status === "held");
  assert.deepEqual(
    held.removed.map((e) => e.key),
    ["ValidatingAdmissionPolicy/drop", "ValidatingAdmissionPolicyBinding/drop-binding"],
  );
  clock.now += 1000;
  assert.equal(status(await store.reload()), "applied");
  assert.deepEqual(names(store), ["keep"]);
});

void test("a deleted file's policies are removed once the deletion has settled", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "a.yaml"), policy("a", 5));
  await writeFile(join(dir, "b.yaml"), policy("b", 5));
  const { store, clock } = await open(t, [dir]);
  await unlink(join(dir, "b.yaml"));
  assert.equal(status(await store.reload()), "held");
  assert.deepEqual(names(store), ["a", "b"]);
  clock.now += 1000;
  assert.equal(status(await store.reload()), "applied");
  assert.deepEqual(names(store), ["a"]);
});

void test("a removed param object is held back like a policy", async (t) => {
  const dir = await tempDir(t);
  const params = join(dir, "params.yaml");
  await writeFile(join(dir, "policy.yaml"), policy("cap", 5));
  await writeFile(
    params,
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: limits\n  namespace: default\n",
  );
  const { store } = await open(t, [dir]);
  await writeFile(params, "");
  const held = await store.reload();
  assert.ok(held.status === "held");
  assert.deepEqual(
    held.removed.map((e) => e.key),
    ["ConfigMap/default/limits"],
  );
});

void test("added and changed objects are applied at once, and say what changed", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "a.yaml"), policy("a", 5));
  const { store, reported } = await open(t, [dir]);
  await writeFile(join(dir, "a.yaml"), `# a comment moves every line\n${policy("a", 5)}`);
  await writeFile(join(dir, "b.yaml"), policy("b", 5));
  const outcome = await store.reload();
  assert.ok(outcome.status === "applied");
  assert.deepEqual(
    outcome.changes.added.map((e) => e.key),
    ["ValidatingAdmissionPolicy/b", "ValidatingAdmissionPolicyBinding/b-binding"],
  );
  assert.deepEqual(outcome.changes.changed, [], "moving a policy down a line changes nothing it says");
  assert.deepEqual(outcome.changes.removed, []);
  // A policy moved to another file is not a removal.
  await writeFile(join(dir, "a.yaml"), "");
  await writeFile(join(dir, "b.yaml"), policy("b", 5) + "---\n" + policy("a", 5));
  const moved = await store.reload();
  assert.equal(moved.status, "applied");
  assert.deepEqual(reported.map(status), ["applied", "applied"]);
});

void test("a file that does not parse keeps its last good content; the same bytes are not news", async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("cap", 5));
  const { store, reported } = await open(t, [dir]);
  await writeFile(file, "kind: [unclosed\n");
  const partial = await store.reload();
  assert.ok(partial.status === "applied");
  assert.deepEqual(partial.snapshot.failedFiles, [file]);
  assert.deepEqual(
    partial.snapshot.diagnostics.map((d) => d.code),
    ["PE_YAML_SYNTAX"],
  );
  assert.deepEqual(partial.changes, { added: [], removed: [], changed: [] });
  assert.equal(limitOf(store, "cap"), 5);
  assert.equal(status(await store.reload()), "unchanged");
  // The old content back: applied whole again (the metrics must read success again), with no changes.
  await writeFile(file, policy("cap", 5));
  const back = await store.reload();
  assert.ok(back.status === "applied");
  assert.deepEqual(back.snapshot.failedFiles, []);
  assert.deepEqual(back.changes, { added: [], removed: [], changed: [] });
  assert.equal(status(await store.reload()), "unchanged");
  assert.deepEqual(reported.map(status), ["applied", "applied"]);
});

/** A ConfigMap of a dozen lines whose aliases expand to a billion nodes. */
const ALIAS_BOMB = [
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata:",
  "  name: bomb",
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...["b", "c", "d", "e", "f", "g", "h", "i"].map(
    (n, i) => `${n}: &${n} [${Array(10).fill(`*${"abcdefghi"[i]}`).join(",")}]`,
  ),
  "",
].join("\n");

void test("an alias bomb written over one file keeps its last good content, and a fix made meanwhile in another file is applied (issue 37 item 6)", async (t) => {
  const dir = await tempDir(t);
  const a = join(dir, "a.yaml");
  const b = join(dir, "b.yaml");
  await writeFile(a, policy("a", 5));
  await writeFile(b, policy("b", 5));
  const { store, reported } = await open(t, [dir]);
  await writeFile(a, `${policy("a", 1)}---\n${ALIAS_BOMB}`);
  await writeFile(b, policy("b", 2));
  const outcome = await store.reload();
  assert.ok(outcome.status === "applied", `got ${outcome.status}`);
  assert.deepEqual(outcome.snapshot.failedFiles, [a]);
  assert.deepEqual(
    outcome.snapshot.diagnostics.filter((d) => d.severity === "error").map((d) => [d.code, d.location?.file]),
    [["PE_YAML_ALIASES", a]],
  );
  assert.equal(limitOf(store, "a"), 5, "the broken file's last good content keeps serving");
  assert.equal(limitOf(store, "b"), 2, "the other file's fix must be applied");
  assert.deepEqual(
    outcome.changes.changed.map((e) => e.key),
    ["ValidatingAdmissionPolicy/b"],
  );
  // Reported once; the same bytes again are not news.
  assert.equal(status(await store.reload()), "unchanged");
  assert.equal(reported.length, 1);
});

void test("a file over the read limit is not read: a new one adds nothing, a known one keeps its last good content (issue 36 item 5)", async (t) => {
  const dir = await tempDir(t);
  const a = join(dir, "a.yaml");
  await writeFile(a, policy("a", 5));
  const limits = { maxFileBytes: 4096, maxSetBytes: 8192 };
  const { store } = await open(t, [dir], { limits });
  // One ConfigMap with one value just over the limit.
  const big = (name: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  v: "${"x".repeat(4096)}"\n`;
  await writeFile(join(dir, "big.yaml"), big("big"));
  const added = await store.reload();
  assert.ok(added.status === "applied");
  assert.deepEqual(added.snapshot.failedFiles, [join(dir, "big.yaml")]);
  const d = added.snapshot.diagnostics.find((x) => x.code === "PE_TOO_LARGE");
  assert.equal(d?.location?.file, join(dir, "big.yaml"));
  assert.match(d?.message ?? "", /is 41\d\d bytes, over the 4096 bytes one policy file may hold; not read/);
  assert.deepEqual(store.current().set.resources, []);
  // The known file grows past the limit: its policy stays as it was.
  await writeFile(a, `${policy("a", 1)}\n#${"y".repeat(4096)}\n`);
  const grown = await store.reload();
  assert.ok(grown.status === "applied");
  assert.equal(limitOf(store, "a"), 5);
  // Files under the per-file limit that pass the set's limit together: the later ones are not read.
  await writeFile(a, policy("a", 4));
  for (const n of ["c", "d", "e"])
    await writeFile(join(dir, `${n}.yaml`), big(n).replace("4096", "1").slice(0, 3000));
  const set = await store.reload();
  assert.ok(set.status === "applied");
  assert.equal(limitOf(store, "a"), 4);
  assert.ok(
    set.snapshot.diagnostics.some(
      (x) => x.code === "PE_TOO_LARGE" && /pass the 8192 bytes a policy set may hold/.test(x.message),
    ),
    JSON.stringify(set.snapshot.diagnostics.map((x) => x.message)),
  );
});

void test("the first load has nothing to fall back on: a file that does not parse fails it", async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, "a.yaml"), ALIAS_BOMB);
  const opened = await PolicyStore.open([dir]);
  assert.ok("diagnostics" in opened);
  assert.deepEqual(
    opened.diagnostics.map((d) => d.code),
    ["PE_YAML_ALIASES"],
  );
});

void test("a ConfigMap volume: each step of kubelet's update is safe, and a half-written swap drops nothing (issue 28 item 2)", async (t) => {
  // The steps are kubernetes pkg/volume/util/atomic_writer.go's (see test/helpers/configmap-volume.ts).
  const dir = await tempDir(t);
  const volume = new ConfigMapVolume(dir);
  await volume.publish({ "replicas.yaml": policy("cap", 5) });
  const { store, reported, clock } = await open(t, [dir]);
  const seen: string[] = [];
  const look = async (step: VolumeStep) => {
    const o = await store.reload();
    seen.push(`${step}:${o.status}`);
  };

  // An update of a key: served from the swap on, never rejected, never held.
  await volume.publish({ "replicas.yaml": policy("cap", 3) }, { between: look });
  assert.deepEqual(seen.splice(0), [
    "written:unchanged",
    "linked:unchanged",
    "swapped:applied",
    "pruned:unchanged",
  ]);
  assert.equal(limitOf(store, "cap"), 3);

  // A key added: its link leads nowhere until the swap, which is no error.
  const both = { "replicas.yaml": policy("cap", 3), "extra.yaml": policy("extra", 1) };
  await volume.publish(both, { between: look });
  assert.deepEqual(seen.splice(0), [
    "written:unchanged",
    "linked:unchanged",
    "swapped:applied",
    "pruned:unchanged",
  ]);
  assert.deepEqual(names(store).sort(), ["cap", "extra"]);

  // A key removed: held from the swap on, applied once it has read the same for settleMs.
  await volume.publish({ "replicas.yaml": policy("cap", 3) }, { between: look });
  assert.deepEqual(seen.splice(0), ["written:unchanged", "linked:unchanged", "swapped:held", "pruned:held"]);
  assert.deepEqual(names(store).sort(), ["cap", "extra"]);
  clock.now += 1000;
  assert.equal(status(await store.reload()), "applied");
  assert.deepEqual(names(store), ["cap"]);

  // A swap onto a directory whose file is still empty: held, and the full file is served when it lands.
  await volume.publish(
    { "replicas.yaml": policy("cap", 2) },
    { between: look, halfWritten: ["replicas.yaml"] },
  );
  assert.deepEqual(seen.splice(0), ["written:unchanged", "linked:unchanged", "swapped:held", "pruned:held"]);
  assert.equal(limitOf(store, "cap"), 3);
  assert.equal(status(await store.reload()), "applied");
  assert.equal(limitOf(store, "cap"), 2);
  assert.ok(
    reported.every((o) => o.status !== "applied" || o.snapshot.set.policies.some((p) => p.name === "cap")),
    "a set without the policy was applied",
  );
  // Each update reported once: no rejection at any step, each hold once.
  assert.deepEqual(reported.map(status), ["applied", "applied", "held", "applied", "held", "applied"]);
});

void test("watching: a truncate-then-rewrite never serves the empty file, and a settled removal is applied by the timer", {
  timeout: 30_000,
}, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "replicas.yaml");
  await writeFile(file, policy("cap", 5));
  await writeFile(join(dir, "other.yaml"), policy("other", 1));
  const reported: ReportedOutcome[] = [];
  // The real clock: the settle timer is what applies a removal while watching.
  const opened = await PolicyStore.open([dir], {
    pollMs: 50,
    settleMs: 300,
    onReload: (o) => reported.push(o),
  });
  if (!("store" in opened)) throw new Error("open failed");
  const { store } = opened;
  t.after(() => store.close());
  store.watch();
  const until = async (what: string, predicate: () => boolean): Promise<void> => {
    for (let i = 0; i < 400 && !predicate(); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(predicate(), `timed out waiting for ${what}: ${JSON.stringify(reported.map(status))}`);
  };

  await writeFile(file, "");
  await until("the held-back reload", () => reported.some((o) => o.status === "held"));
  assert.deepEqual(names(store), ["other", "cap"]);
  await writeFile(file, policy("cap", 4));
  await until("the rewritten file", () => limitOf(store, "cap") === 4);
  assert.ok(
    reported.every((o) => o.status !== "applied" || o.snapshot.set.policies.some((p) => p.name === "cap")),
    "a set without the policy was applied",
  );

  // Now a removal meant on purpose: the file is deleted and stays deleted.
  const before = reported.length;
  await unlink(file);
  await until("the removal to be applied", () => names(store).join() === "other");
  assert.deepEqual(reported.slice(before).map(status), ["held", "applied"]);
});

void test("the docs and serve --help state the settle time the store uses", async () => {
  const { help } = await import("../../../src/adapters/cli/commands/serve.ts");
  const { userDocs } = await import("../../helpers/docs.ts");
  const stated = `${DEFAULT_SETTLE_MS / 1000} s apart`;
  assert.ok(userDocs.includes(stated), `the docs must say "${stated}"`);
  assert.ok(help.includes(stated), `serve --help must say "${stated}"`);
});
