/**
 * The Dockerfile's steps, run without Docker (these machines have no engine, so the image is correct
 * by construction or not at all). The build stage gets a context holding only what .dockerignore
 * lets in, takes its COPYs from it and runs its RUN steps (its `npm ci` is stood in for by the
 * repository's node_modules, installed from the same lock file); the runtime stage copies the
 * package files, runs `npm ci --omit=dev` for real (production dependencies only, from npm's cache),
 * takes dist/ from the build stage and policies/ from the context, and starts ENTRYPOINT + CMD. The
 * server must answer /readyz and mutate a Pod with a bundled ApplyConfiguration policy, which reads
 * the built-in schemas the build copies into dist/.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

interface Instruction {
  readonly op: string;
  readonly args: string;
}

interface Stage {
  readonly name: string | undefined;
  readonly steps: Instruction[];
}

/** The Dockerfile as stages of instructions, continuation lines joined, comments and ARGs dropped. */
function stages(): Stage[] {
  const text = readFileSync(join(root, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const out: Stage[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [op = "", ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    if (op.toUpperCase() === "FROM") out.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1], steps: [] });
    else if (op.toUpperCase() !== "ARG") out.at(-1)?.steps.push({ op: op.toUpperCase(), args });
  }
  return out;
}

function globRegExp(pattern: string): RegExp {
  const body = pattern
    .replace(/\/$/, "/**")
    .split("**")
    .map((part) => part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
    .join(".*");
  return new RegExp(`^${body}$`);
}

/** The files of the repository that .dockerignore lets into the build context (its own rules only). */
function contextFiles(): string[] {
  const rules = readFileSync(join(root, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  assert.equal(rules[0], "*", ".dockerignore denies by default");
  const allowed = rules.filter((r) => r.startsWith("!")).map((r) => r.slice(1).replace(/\/$/, ""));
  const denied = rules
    .slice(1)
    .filter((r) => !r.startsWith("!"))
    .map(globRegExp);
  const files: string[] = [];
  const walk = (rel: string): void => {
    const full = join(root, rel);
    const entries = readdirSync(full, { withFileTypes: true });
    for (const e of entries) {
      const path = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (!denied.some((d) => d.test(path))) files.push(path);
    }
  };
  for (const a of allowed) {
    if (!existsSync(join(root, a))) continue;
    if (statSync(join(root, a)).isDirectory()) walk(a);
    else if (!denied.some((d) => d.test(a))) files.push(a);
  }
  return files;
}

/** `COPY SRC... DEST` (DEST relative to WORKDIR when not absolute) from `from` into the stage's dir. */
function copy(args: string, from: string, stageDir: string, workdir: string): void {
  const parts = args.split(" ").filter((p) => !p.startsWith("--"));
  const dest = parts.at(-1) ?? ".";
  const target = dest.startsWith("/") ? join(stageDir, relative(workdir, dest)) : join(stageDir, dest);
  for (const src of parts.slice(0, -1)) {
    const origin = src.startsWith("/") ? join(from, relative(workdir, src)) : join(from, src);
    assert.ok(existsSync(origin), `COPY ${src}: it is in the ${from === stageDir ? "stage" : "context"}`);
    const into = dest.endsWith("/") || parts.length > 2 ? join(target, src.split("/").at(-1) ?? src) : target;
    mkdirSync(dirname(into), { recursive: true });
    cpSync(origin, into, { recursive: true });
  }
}

function run(command: string, cwd: string): void {
  const r = spawnSync("sh", ["-c", command], { cwd, encoding: "utf8", timeout: 180_000 });
  assert.equal(r.status, 0, `${command}\n${r.stdout}\n${r.stderr}`);
}

function get(url: URL, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: body === undefined ? "GET" : "POST",
        rejectUnauthorized: false,
        timeout: 10_000,
        headers: body === undefined ? {} : { "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

void test("the Dockerfile's build and runtime stages, run step by step without Docker, give a server that mutates with the built-in schemas", {
  timeout: 300_000,
}, async (t) => {
  const [build, runtime] = stages();
  assert.ok(build && runtime, "a build stage and a runtime stage");
  const work = mkdtempSync(join(tmpdir(), "celgate-docker-steps-"));
  t.after(() => rmSync(work, { recursive: true, force: true }));

  const context = join(work, "context");
  for (const f of contextFiles()) {
    mkdirSync(dirname(join(context, f)), { recursive: true });
    cpSync(join(root, f), join(context, f));
  }

  const buildDir = join(work, "build");
  mkdirSync(buildDir);
  let buildWorkdir = "/";
  for (const step of build.steps) {
    if (step.op === "WORKDIR") buildWorkdir = step.args;
    else if (step.op === "COPY") copy(step.args, context, buildDir, buildWorkdir);
    else if (step.op === "RUN") {
      // The repository's dev install stands in for the build stage's `npm ci` (same lock file).
      if (/^npm ci\b/.test(step.args))
        symlinkSync(join(root, "node_modules"), join(buildDir, "node_modules"));
      else run(step.args, buildDir);
    }
  }

  const appDir = join(work, "app");
  mkdirSync(appDir);
  let workdir = "/";
  let entrypoint: string[] = [];
  let cmd: string[] = [];
  for (const step of runtime.steps) {
    if (step.op === "WORKDIR") workdir = step.args;
    else if (step.op === "COPY") {
      const from = /--from=(\S+)/.exec(step.args)?.[1];
      assert.ok(from === undefined || from === build.name, `COPY --from=${from} names the build stage`);
      copy(
        step.args.replace(/^--from=\S+\s*/, ""),
        from ? buildDir : context,
        appDir,
        from ? buildWorkdir : workdir,
      );
    } else if (step.op === "RUN") {
      // Only the install runs: cleaning npm's cache would clean this machine's, not an image's.
      const install = step.args
        .split("&&")
        .map((s) => s.trim())
        .find((s) => s.startsWith("npm ci"));
      assert.ok(install?.includes("--omit=dev"), "the runtime installs production dependencies only");
      run(`${install} --prefer-offline`, appDir);
    } else if (step.op === "ENTRYPOINT") entrypoint = JSON.parse(step.args) as string[];
    else if (step.op === "CMD") cmd = JSON.parse(step.args) as string[];
  }
  assert.ok(!existsSync(join(appDir, "node_modules", "typescript")), "no dev dependency in the image");
  assert.ok(existsSync(join(appDir, "dist", "kube", "schemas", "data")), "the build copied the schema data");

  const [node, ...rest] = entrypoint;
  assert.equal(node, "node");
  const args = [...rest, ...cmd].map((a) =>
    a.startsWith(`${workdir}/`) ? join(appDir, relative(workdir, a)) : a,
  );
  const child: ChildProcess = spawn(
    process.execPath,
    [...args, "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0", "--drain-seconds", "0"],
    { cwd: appDir, env: { ...process.env, NODE_ENV: "production" }, stdio: ["ignore", "ignore", "pipe"] },
  );
  t.after(() => child.kill("SIGKILL"));
  let log = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no serving line in 60 s:\n${log}`)), 60_000);
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      log += chunk;
      const m = /on (https:\/\/[^\s;]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
  });
  assert.equal((await get(new URL("/readyz", url))).status, 200);

  // always-pull-images is an ApplyConfiguration: merging it reads the Pod's schema.
  const review = {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "docker-steps",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      operation: "CREATE",
      namespace: "default",
      name: "web",
      userInfo: { username: "alice" },
      object: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web", namespace: "default" },
        spec: { containers: [{ name: "app", image: "nginx:1.27", imagePullPolicy: "IfNotPresent" }] },
      },
    },
  };
  const answer = await get(new URL("/mutate", url), JSON.stringify(review));
  assert.equal(answer.status, 200, answer.text);
  const response = (JSON.parse(answer.text) as { response: { allowed: boolean; patch?: string } }).response;
  assert.equal(response.allowed, true);
  const patch = JSON.parse(Buffer.from(response.patch ?? "", "base64").toString("utf8")) as unknown[];
  assert.ok(
    patch.some((op) => JSON.stringify(op).includes('"Always"')),
    `the image pull policy became Always: ${JSON.stringify(patch)}`,
  );
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  assert.equal(await exited, 0);
});
