/**
 * Issue 36: `audit --kubeconfig` against an API server that does not answer printed nothing for a
 * minute. It now says at once, on stderr, what it is waiting for, and fails with a clear message
 * once --timeout has passed: against a loopback port nothing listens on (connection refused) and
 * against one that accepts connections and never answers. Loopback only.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { run } from "../../src/adapters/cli/commands/audit.ts";
import { cli } from "../unit/cli/fake-io.ts";
import { tempDir } from "../helpers/webhook.ts";

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: no-latest }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - { apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods] }
  validations:
  - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: no-latest }
spec: { policyName: no-latest, validationActions: [Deny] }
`;

function kubeconfig(port: number): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: { server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true }
users:
- name: me
  user: { token: t }
contexts:
- name: local
  context: { cluster: local, user: me }
current-context: local
`;
}

/** A loopback server: `hang` accepts connections and never answers; otherwise it is closed at once. */
async function listen(t: TestContext, hang: boolean): Promise<{ port: number; accepted: () => number }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  let accepted = 0;
  server.on("connection", () => accepted++);
  if (!hang) await close();
  else t.after(close);
  return { port, accepted: () => accepted };
}

async function audit(t: TestContext, port: number) {
  const dir = await tempDir(t, "celgate-audit-unreachable-");
  await writeFile(join(dir, "policies.yaml"), POLICY);
  await writeFile(join(dir, "kubeconfig"), kubeconfig(port));
  return cli(["audit", "-p", "policies.yaml", "--kubeconfig", "kubeconfig", "--timeout", "1"], { cwd: dir });
}

for (const [what, hang] of [
  ["refuses connections", false],
  ["accepts connections and never answers", true],
] as const) {
  void test(`audit --kubeconfig, a server that ${what}: says what it waits for, then fails after --timeout`, {
    timeout: 30_000,
  }, async (t) => {
    const { port, accepted } = await listen(t, hang);
    const r = await audit(t, port);
    // The hanging server was reached: the wait was for its answer, not for a connection.
    if (hang) assert.ok(accepted() > 0);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    const lines = r.stderr.split("\n");
    assert.match(
      lines[0] ?? "",
      new RegExp(
        `^celgate audit: waiting for http://127\\.0\\.0\\.1:${port} to list Namespaces \\(up to 1 s; --timeout\\)$`,
      ),
    );
    assert.match(
      r.stderr,
      new RegExp(`celgate audit: http://127\\.0\\.0\\.1:${port} did not answer within 1 s`),
    );
    if (!hang) assert.match(r.stderr, /ECONNREFUSED/);
  });
}

void test("audit --timeout must be a whole number of seconds", async (t) => {
  const dir = await tempDir(t, "celgate-audit-timeout-");
  const out = { stdout: "", stderr: "" };
  const code = await run(["-p", "p.yaml", "--kubeconfig", "k", "--timeout", "soon"], {
    stdout: (s) => {
      out.stdout += s;
    },
    stderr: (s) => {
      out.stderr += s;
    },
    stdin: async () => "",
    cwd: dir,
    env: {},
    isTTY: false,
  });
  assert.equal(code, 2);
  assert.match(out.stderr, /--timeout must be a whole number of seconds from 1 to 3600, got 'soon'/);
});
