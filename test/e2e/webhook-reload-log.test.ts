/**
 * `celgate serve` as a process reports a policy reload as one JSON line on stdout, in the request
 * log's format, with each problem as `celgate check` prints it (issue 29 item 9), and says nothing
 * about it on stderr. Warnings and errors are written at once, so the test need not wait a second.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { cli } from "../unit/cli/fake-io.ts";
import { tempDir, waitFor } from "../helpers/webhook.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cap
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cap-binding
spec:
  policyName: cap
  validationActions: [Deny]
`;

void test("serve logs a broken policy file and a held-back reload as single JSON lines on stdout", {
  timeout: 60_000,
}, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, "cap.yaml");
  await writeFile(file, POLICY);
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/adapters/cli/bin.ts",
      "serve",
      "--policies",
      dir,
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--metrics-port",
      "0",
      "--drain-seconds",
      "0",
    ],
    { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, timeout: 45_000, killSignal: "SIGKILL" },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  await waitFor("the serving line", () => (/celgate serving/.test(stderr) ? true : undefined), 30_000);
  const reloadLines = () =>
    stdout
      .split("\n")
      .filter((l) => l.includes('"event":"policy-reload"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  // A field with a value the API server would refuse: the file keeps its last good content.
  await writeFile(
    file,
    POLICY.replace("  matchConstraints:", "  failurePolicy: Sometimes\n  matchConstraints:"),
  );
  const [rejected] = await waitFor("the rejection on stdout", () => {
    const lines = reloadLines();
    return lines.length > 0 ? lines : undefined;
  });
  assert.equal(rejected?.level, 50);
  assert.equal(rejected?.result, "partial");
  assert.deepEqual(rejected?.failedFiles, [file]);
  const check = await cli(["check", file]);
  const diagnostics = rejected?.diagnostics as { text: string; code: string; path: string }[];
  // The file's last good content serves, so its binding still names a loaded policy: the one
  // problem, exactly as check prints it (check, reading the file alone, adds the inert binding).
  assert.deepEqual(
    diagnostics.map((d) => [d.code, d.path]),
    [["PE_FIELD_VALUE", "spec.failurePolicy"]],
  );
  assert.equal(check.code, 1);
  assert.deepEqual(
    diagnostics.map((d) => d.text),
    check.stdout.split("\n").slice(0, 1),
  );
  assert.equal(
    diagnostics[0]?.text,
    `${file}:6:18: error: spec.failurePolicy: must be one of "Fail", "Ignore"; got "Sometimes" [PE_FIELD_VALUE]`,
  );
  assert.equal(stdout.split("\n").filter((l) => l.includes("which keep their last good content")).length, 1);

  // The file emptied: held back, a warning naming the policy and its binding.
  await writeFile(file, "");
  const held = await waitFor("the held-back warning on stdout", () =>
    reloadLines().find((l) => l.result === "held_back"),
  );
  assert.equal(held.level, 40);
  assert.deepEqual(held.removed, [
    "ValidatingAdmissionPolicy/cap",
    "ValidatingAdmissionPolicyBinding/cap-binding",
  ]);
  assert.doesNotMatch(stderr, /reload/, "reloads are reported in the JSON log, not on stderr");

  child.kill("SIGTERM");
  assert.equal(await exited, 0);
});
