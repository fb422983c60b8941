/**
 * What the Docker image runs, checked without Docker: the production build starts from its
 * entrypoint and answers /readyz, and the shipped code imports only production dependencies
 * (what `npm ci --omit=dev` installs). The build is the package's own `npm run build` (tsc and the
 * data files src/ reads at run time), and the tarball is what `npm pack` makes of it, so a file the
 * build or the package's `files` leaves out fails here (issue 36).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:https";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

void test("src/ imports only node builtins and production dependencies", () => {
  const builtins = new Set(builtinModules);
  const offenders: string[] = [];
  for (const file of sourceFiles(join(root, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*(?:import|export)[^'"]*?from\s+["']([^"']+)["']/gm)) {
      const spec = m[1] as string;
      if (spec.startsWith(".") || spec.startsWith("node:")) continue;
      if (/^import\s+type\b/.test(m[0].trim()) || /^export\s+type\b/.test(m[0].trim())) continue;
      const name = spec.startsWith("@")
        ? spec.split("/").slice(0, 2).join("/")
        : (spec.split("/")[0] as string);
      if (builtins.has(name)) continue;
      if (!(name in pkg.dependencies)) offenders.push(`${file.slice(root.length)} imports ${spec}`);
    }
  }
  assert.deepEqual(offenders, []);
});

let built: string | undefined;

/** What the package's build reads, as the Dockerfile's build stage copies it, and what `files` ships. */
const BUILD_INPUTS = ["package.json", "tsconfig.json", "tsconfig.build.json", "tools", "src", "policies"];

/**
 * The package as `npm run build` leaves it, made once for this file's tests from a copy of what
 * the build reads (so the repository's own dist/ is left alone): inside the repository, under the
 * ignored .celgate/, with node_modules linked, so the build's tools and ESM resolution find the
 * dependencies as in the image.
 */
function builtPackage(): string {
  if (built !== undefined) return built;
  mkdirSync(join(root, ".celgate"), { recursive: true });
  const out = mkdtempSync(join(root, ".celgate", "dist-test-"));
  for (const f of BUILD_INPUTS) cpSync(join(root, f), join(out, f), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(out, "node_modules"), "dir");
  const build = spawnSync("npm", ["run", "build"], { cwd: out, encoding: "utf8", timeout: 150_000 });
  assert.equal(build.status, 0, `${build.stdout}${build.stderr}`);
  built = out;
  return out;
}

after(() => {
  if (built !== undefined) rmSync(built, { recursive: true, force: true });
});

void test("the production build starts from the Dockerfile's entrypoint and answers /readyz", {
  timeout: 120_000,
}, async (t) => {
  const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
  const entry = /ENTRYPOINT\s+\["node",\s*"([^"]+)"/.exec(dockerfile)?.[1];
  assert.ok(entry, "the Dockerfile has an exec-form node ENTRYPOINT");
  const out = builtPackage();
  const bin = join(out, entry);
  const child = spawn(
    process.execPath,
    [
      bin,
      "serve",
      "--policies",
      join(root, "policies"),
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--metrics-port",
      "0",
      "--drain-seconds",
      "0",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  t.after(() => child.kill("SIGKILL"));
  let log = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no serving line in 30 s:\n${log}`)), 30_000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      log += chunk;
      const m = /on (https:\/\/[^\s;]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}:\n${log}`)));
  });
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(new URL("/readyz", url), { rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
  assert.equal(status, 200);
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  assert.equal(await exited, 0);
});

// ---- the package, as a user installs it -----------------------------------------------------

/**
 * A MutatingAdmissionPolicy's ApplyConfiguration is merged with the Pod's schema, which the engine
 * reads from the data files the build copies into dist/: without them it cannot mutate.
 */
const MUTATION = `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: {name: team-label}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}'
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: {name: team-label}
spec: {policyName: team-label}
`;

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-privileged}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"]}
  validations:
    - expression: "object.spec.containers.all(c, !c.?securityContext.?privileged.orValue(false))"
      message: privileged containers are not allowed
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-privileged}
spec: {policyName: no-privileged, validationActions: [Deny]}
`;

/** A user's program, in plain JavaScript, importing the package by its name. */
const PROGRAM = `import { admit, compilePolicies, evaluateExpression, loadPolicies, requestFor } from "celgate";
import { readFileSync } from "node:fs";

const loaded = loadPolicies(readFileSync("policy.yaml", "utf8"), "policy.yaml");
const policies = compilePolicies(loaded.set);
const pod = (privileged) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default" },
  spec: { containers: [{ name: "app", image: "nginx:1.27", securityContext: { privileged } }] },
});
const decide = (object, set = policies) => {
  const request = requestFor(object);
  if (!request.ok) throw new Error(request.error);
  const d = admit(set, request.value);
  return { allowed: d.allowed, status: d.status ?? null, patch: d.patch ?? null };
};
const mutating = compilePolicies(loadPolicies(readFileSync("mutation.yaml", "utf8"), "mutation.yaml").set);
let deepImport = "allowed";
try {
  await import("celgate/dist/engine/admit.js");
} catch (e) {
  deepImport = e.code;
}
console.log(JSON.stringify({
  problems: [...loaded.diagnostics, ...policies.diagnostics].length,
  privileged: decide(pod(true)),
  plain: decide(pod(false)),
  mutated: decide(pod(false), mutating),
  expression: evaluateExpression("object.spec.replicas * 2", { object: { spec: { replicas: 3 } } }),
  badRequest: requestFor({ metadata: {} }).ok,
  deepImport,
}));
`;

/** npm, with output kept for the assertion message. */
function npm(args: readonly string[], cwd: string): ReturnType<typeof spawnSync> {
  return spawnSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    timeout: 120_000,
  });
}

void test("the packed package installs, and plain JavaScript admits a Pod through its API", {
  timeout: 240_000,
}, (t) => {
  const packageDir = builtPackage();
  const tmp = mkdtempSync(join(tmpdir(), "celgate-pack-"));
  t.after(() => rmSync(tmp, { recursive: true, force: true }));

  // As `npm pack` (and publish) packs it after the build: with the package's own pack scripts, if any.
  const packed = npm(["pack", "--json", "--pack-destination", tmp], packageDir);
  assert.equal(packed.status, 0, `${packed.stdout}${packed.stderr}`);
  const [tarball] = JSON.parse(String(packed.stdout)) as { filename: string; files: { path: string }[] }[];
  assert.ok(tarball);
  const files = tarball.files.map((f) => f.path);
  assert.ok(files.includes("dist/index.js") && files.includes("dist/index.d.ts"), files.join(", "));
  assert.ok(
    files.some((f) => f.startsWith("dist/kube/schemas/data/")),
    "the schema data MutatingAdmissionPolicy needs",
  );

  // The consumer locks the package's production dependencies at the versions our lockfile holds,
  // so npm installs them from its cache without asking the registry for their metadata.
  const app = join(tmp, "app");
  mkdirSync(app);
  const ours = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean } & Record<string, unknown>>;
  };
  const spec = `file:../${tarball.filename}`;
  const locked: Record<string, unknown> = {
    "": { name: "app", dependencies: { celgate: spec } },
    "node_modules/celgate": { version: pkg.version, resolved: spec, dependencies: pkg.dependencies },
  };
  for (const [path, entry] of Object.entries(ours.packages))
    if (path !== "" && !entry.dev && !entry.devOptional) locked[path] = entry;
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", private: true, type: "module", dependencies: { celgate: spec } }),
  );
  writeFileSync(
    join(app, "package-lock.json"),
    JSON.stringify({ name: "app", lockfileVersion: 3, requires: true, packages: locked }),
  );
  let installed = npm(["install", "--offline", "--ignore-scripts"], app);
  // A cache without some tarball (CI has the registry): fetch only what is missing.
  if (installed.status !== 0 && /ENOTCACHED/.test(String(installed.stderr)))
    installed = npm(["install", "--prefer-offline", "--ignore-scripts"], app);
  assert.equal(installed.status, 0, `${installed.stdout}${installed.stderr}`);

  writeFileSync(join(app, "policy.yaml"), POLICY);
  writeFileSync(join(app, "mutation.yaml"), MUTATION);
  writeFileSync(join(app, "main.mjs"), PROGRAM);
  const ran = spawnSync(process.execPath, ["main.mjs"], { cwd: app, encoding: "utf8", timeout: 60_000 });
  assert.equal(ran.status, 0, ran.stderr);
  assert.deepEqual(JSON.parse(ran.stdout), {
    problems: 0,
    privileged: {
      allowed: false,
      status: {
        code: 422,
        reason: "Invalid",
        message:
          "ValidatingAdmissionPolicy 'no-privileged' with binding 'no-privileged' denied request: privileged containers are not allowed",
      },
      patch: null,
    },
    plain: { allowed: true, status: null, patch: null },
    mutated: {
      allowed: true,
      status: null,
      patch: [{ op: "add", path: "/metadata/labels", value: { team: "a" } }],
    },
    expression: { ok: true, value: 6, type: "int" },
    badRequest: false,
    deepImport: "ERR_PACKAGE_PATH_NOT_EXPORTED",
  });
});
