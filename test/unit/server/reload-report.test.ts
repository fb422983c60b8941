/**
 * What serve logs and counts for a policy reload (issue 29 item 9): one JSON line per outcome, in
 * pino's format, carrying each problem as `celgate check` prints it. The outcomes come from a real
 * PolicyStore over real files.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { Registry } from "prom-client";
import { MAX_DIAGNOSTICS_PER_FILE } from "../../../src/adapters/output/diagnostics.ts";
import { createWebhookMetrics } from "../../../src/adapters/server/metrics.ts";
import { RELOAD_EVENT, reportReload } from "../../../src/adapters/server/reload-report.ts";
import { serverLog } from "../../../src/adapters/server/server-log.ts";
import { PolicyStore, type ReportedOutcome } from "../../../src/sources/store.ts";
import { cli } from "../cli/fake-io.ts";

const POLICY = (name: string, limit: number) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: ${name}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= ${limit}"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: ${name}
spec:
  policyName: ${name}
  validationActions: [Deny]
`;

/** A field value that does not parse, and a CEL syntax error (with its caret line) that compiles to an error. */
const BROKEN = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cap
spec:
  failurePolicy: Sometimes
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <="
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cap
spec:
  policyName: cap
  validationActions: [Deny]
`;

interface Setup {
  readonly dir: string;
  readonly file: string;
  readonly store: PolicyStore;
  readonly outcomes: ReportedOutcome[];
  readonly lines: string[];
  readonly registry: Registry;
  /** Reloads, then reports what the store reported, as serve does. */
  reload(): Promise<void>;
}

async function setup(t: TestContext): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), "celgate-reload-report-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, "cap.yaml");
  await writeFile(file, POLICY("cap", 5));
  const registry = new Registry();
  const metrics = createWebhookMetrics(registry);
  const lines: string[] = [];
  const log = serverLog({ level: "info", stream: { write: (l: string) => void lines.push(l) } });
  const outcomes: ReportedOutcome[] = [];
  let clock = 0;
  const opened = await PolicyStore.open([dir], {
    settleMs: 1000,
    now: () => clock,
    onReload: (o) => {
      outcomes.push(o);
      reportReload(o, metrics, log, o.status === "applied" ? ["a note"] : []);
    },
  });
  if (!("store" in opened)) throw new Error("open failed");
  const { store } = opened;
  return {
    dir,
    file,
    store,
    outcomes,
    lines,
    registry,
    reload: async () => {
      clock += 1;
      await store.reload();
    },
  };
}

function parse(line: string): Record<string, unknown> {
  assert.ok(
    line.endsWith("\n") && !line.slice(0, -1).includes("\n"),
    `not one line: ${JSON.stringify(line)}`,
  );
  return JSON.parse(line) as Record<string, unknown>;
}

async function sample(registry: Registry, name: string, labels = ""): Promise<number | undefined> {
  const text = await registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
}

void test("a file that does not parse: one error line with check's file:line:col text, code and field path", async (t) => {
  const s = await setup(t);
  await writeFile(s.file, BROKEN);
  await s.reload();
  assert.equal(s.lines.length, 1);
  const line = parse(s.lines[0] as string);
  assert.equal(line.level, 50);
  assert.equal(line.event, RELOAD_EVENT);
  // The file keeps its last good content (the policy and its binding), so nothing else changes.
  assert.equal(line.result, "partial");
  assert.deepEqual(line.failedFiles, [s.file]);
  assert.equal(
    line.msg,
    `policies reloaded without ${s.file}, which keep their last good content (1 error): 1 policy, 1 binding; 0 added, 0 removed, 0 changed`,
  );
  const diagnostics = line.diagnostics as Record<string, unknown>[];
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.severity, d.path, d.file, d.line, d.column]),
    [["PE_FIELD_VALUE", "error", "spec.failurePolicy", s.file, 6, 18]],
  );
  // Exactly what `celgate check` prints for the same file, problem by problem.
  const check = await cli(["check", s.file]);
  assert.equal(check.code, 1);
  assert.ok(
    check.stdout.startsWith(diagnostics.map((d) => `${d.text as string}\n`).join("")),
    `check printed:\n${check.stdout}`,
  );
  assert.equal(
    diagnostics[0]?.text,
    `${s.file}:6:18: error: spec.failurePolicy: must be one of "Fail", "Ignore"; got "Sometimes" [PE_FIELD_VALUE]`,
  );
  assert.equal(await sample(s.registry, "celgate_policy_reloads_total", '{result="partial"}'), 1);
  assert.equal(await sample(s.registry, "celgate_policy_last_reload_success"), 0);
});

void test("a reload that fails as a whole (a fault, not the files) is one error line and a failure, once per content", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "celgate-reload-fault-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "cap.yaml"), POLICY("cap", 5));
  const registry = new Registry();
  const metrics = createWebhookMetrics(registry);
  const lines: string[] = [];
  const log = serverLog({ level: "info", stream: { write: (l: string) => void lines.push(l) } });
  let faults = 1;
  const opened = await PolicyStore.open([dir], {
    pollMs: 20,
    onReload: (o) => reportReload(o, metrics, log),
    loadHooks: {
      afterRead: () => {
        if (faults-- > 0) throw new Error("disk on fire");
      },
    },
  });
  if (!("store" in opened)) throw new Error("open failed");
  t.after(() => opened.store.close());
  metrics.recordReload("success");
  opened.store.watch();
  await writeFile(join(dir, "cap.yaml"), POLICY("cap", 3));
  for (let i = 0; i < 200 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  // Polls go on; the same files are not tried (nor reported) again.
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(lines.length, 1, lines.join(""));
  const line = parse(lines[0] as string);
  assert.equal(line.level, 50);
  assert.equal(line.result, "failure");
  assert.equal(line.error, "disk on fire");
  assert.equal(line.msg, "policy reload failed: disk on fire; the last good policies keep serving");
  assert.equal(await sample(registry, "celgate_policy_reloads_total", '{result="failure"}'), 1);
  assert.equal(await sample(registry, "celgate_policy_last_reload_success"), 0);
  // The next change loads.
  await writeFile(join(dir, "cap.yaml"), POLICY("cap", 2));
  for (let i = 0; i < 200 && lines.length === 1; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(parse(lines[1] as string).result, "success");
  assert.equal(await sample(registry, "celgate_policy_last_reload_success"), 1);
});

void test("a compile error does not block a reload; it is on the success line as check prints it", async (t) => {
  const s = await setup(t);
  await writeFile(s.file, BROKEN.replace("Sometimes", "Fail"));
  await s.reload();
  const line = parse(s.lines[0] as string);
  assert.equal(line.result, "success");
  const diagnostics = line.diagnostics as Record<string, unknown>[];
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.path]),
    [["PE_CEL_PARSE", "spec.validations[0].expression"]],
  );
  const check = await cli(["check", s.file]);
  assert.ok(check.stdout.startsWith(`${diagnostics[0]?.text as string}\n`), check.stdout);
  assert.match(diagnostics[0]?.text as string, /\n \| object\.spec\.replicas <=\n/);
});

void test("a held-back reload: one warning naming what it would remove and where, counted as suspect", async (t) => {
  const s = await setup(t);
  await writeFile(s.file, "");
  await s.reload();
  assert.equal(s.lines.length, 1);
  const line = parse(s.lines[0] as string);
  assert.equal(line.level, 40);
  assert.equal(line.event, RELOAD_EVENT);
  assert.equal(line.result, "held_back");
  assert.deepEqual(line.removed, ["ValidatingAdmissionPolicy/cap", "ValidatingAdmissionPolicyBinding/cap"]);
  assert.deepEqual(line.files, [s.file]);
  assert.equal(line.settleMs, 1000);
  assert.equal(
    line.msg,
    "policy reload held back: it would remove ValidatingAdmissionPolicy/cap, ValidatingAdmissionPolicyBinding/cap; the last good policies keep serving until the files read the same twice 1000 ms apart",
  );
  assert.equal(await sample(s.registry, "celgate_policy_reload_suspect_total"), 1);
  assert.equal(await sample(s.registry, "celgate_policy_reloads_total", '{result="success"}'), undefined);
  assert.equal(await sample(s.registry, "celgate_policy_last_reload_success"), 0);
});

void test("an applied reload: one info line with the counts and what was added, removed and changed", async (t) => {
  const s = await setup(t);
  await writeFile(s.file, POLICY("cap", 3));
  await writeFile(join(s.dir, "more.yaml"), POLICY("more", 1));
  await s.reload();
  const line = parse(s.lines[0] as string);
  assert.equal(line.level, 30);
  const { time, pid, hostname, ...rest } = line;
  assert.equal(typeof time, "number");
  assert.equal(pid, process.pid);
  assert.equal(typeof hostname, "string");
  assert.deepEqual(rest, {
    level: 30,
    event: RELOAD_EVENT,
    result: "success",
    policies: 2,
    bindings: 2,
    added: ["ValidatingAdmissionPolicy/more", "ValidatingAdmissionPolicyBinding/more"],
    removed: [],
    changed: ["ValidatingAdmissionPolicy/cap"],
    diagnostics: [],
    notes: ["a note"],
    msg: "policies reloaded: 2 policies, 2 bindings; 2 added, 0 removed, 1 changed",
  });
  assert.equal(await sample(s.registry, "celgate_policy_reloads_total", '{result="success"}'), 1);
  assert.equal(await sample(s.registry, "celgate_policy_last_reload_success"), 1);
});

void test("a file of noise: the line holds at most the per-file bound of problems and how many more (issue 36)", async (t) => {
  const s = await setup(t);
  // Many lines the YAML parser refuses one by one: a problem each.
  await writeFile(s.file, `${POLICY("cap", 5)}---\n${"a: b: c\n".repeat(300)}`);
  await s.reload();
  assert.equal(s.lines.length, 1);
  const line = parse(s.lines[0] as string);
  // The file that does not parse keeps its last good content: a partial reload.
  assert.equal(line.result, "partial");
  const diagnostics = line.diagnostics as Record<string, unknown>[];
  const omitted = line.omittedDiagnostics as { file: string; count: number }[];
  assert.equal(diagnostics.length, MAX_DIAGNOSTICS_PER_FILE);
  assert.equal(omitted.length, 1);
  assert.equal(omitted[0]?.file, s.file);
  assert.ok((omitted[0]?.count ?? 0) > 0);
});
