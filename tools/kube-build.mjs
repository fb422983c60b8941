/**
 * `npm run kube:build [-- v1.37 ...]`: builds the real control plane of each Kubernetes release
 * under tools/kube/ (one Go module per release: kube-apiserver, etcd, kube-controller-manager)
 * into the cache of tools/kube-cache.mjs (outside the repository, shared by every clone on the
 * machine), where test/helpers/kube-control-plane.ts finds them.
 *
 * A release is skipped when its binaries are there and were built from the same module files
 * (a stamp holds their hash), so a second run is a no-op. One `go build` at a time, under `nice`:
 * the machines are shared, and a kube-apiserver build is long and memory-hungry. The binaries are
 * static (CGO_ENABLED=0, as Kubernetes' own release builds are) and report their real version
 * (component-base/version, set with -ldflags -X as hack/lib/version.sh does). The build goes to a
 * `.partial` directory first, so an interrupted build never looks finished.
 */
import { kubeCacheDir } from "./kube-cache.mjs";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const modulesDir = join(root, "tools", "kube");
export const BINARIES = ["kube-apiserver", "etcd", "kube-controller-manager"];

/** The k8s.io/kubernetes version a release module requires (`v1.37.2`). */
function kubernetesVersion(goMod) {
  const m = /^\s*k8s\.io\/kubernetes (v1\.\d+\.\d+)\s*$/m.exec(goMod);
  if (!m) throw new Error("go.mod requires no k8s.io/kubernetes vX.Y.Z");
  return m[1];
}

/** Every file the binaries are built from, hashed, with the flags: a change rebuilds. */
function stampOf(dir, flags) {
  const hash = createHash("sha256").update(flags.join("\0"));
  const files = ["go.mod", "go.sum", ...BINARIES.map((b) => join("cmd", b, "main.go"))];
  for (const f of files) hash.update(`\0${f}\0`).update(readFileSync(join(dir, f)));
  return hash.digest("hex");
}

function buildFlags(version) {
  const [major, minor] = version.slice(1).split(".");
  const v = "k8s.io/component-base/version";
  return [
    "-trimpath",
    "-mod=readonly",
    "-ldflags",
    `-s -w -X ${v}.gitVersion=${version} -X ${v}.gitMajor=${major} -X ${v}.gitMinor=${minor} -X ${v}.gitTreeState=clean`,
  ];
}

/** The releases to build: every module under tools/kube, or those named (`v1.37`). */
function releases(names) {
  const all = readdirSync(modulesDir).filter((d) => existsSync(join(modulesDir, d, "go.mod")));
  const unknown = names.filter((n) => !all.includes(n));
  if (unknown.length > 0) throw new Error(`no module tools/kube/${unknown[0]} (have ${all.join(", ")})`);
  return (names.length > 0 ? names : all).sort();
}

/** Builds one release unless it is current; returns what it did, for the one line printed. */
function buildRelease(release) {
  const dir = join(modulesDir, release);
  const version = kubernetesVersion(readFileSync(join(dir, "go.mod"), "utf8"));
  const flags = buildFlags(version);
  const stamp = stampOf(dir, flags);
  const out = join(kubeCacheDir(), version);
  const stampFile = join(out, "stamp");
  const present = BINARIES.every((b) => existsSync(join(out, b)));
  if (present && existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === stamp)
    return `${version}: present in ${out}, nothing to build`;

  const partial = `${out}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const started = Date.now();
  const args = [
    "-n",
    "10",
    "go",
    "build",
    ...flags,
    "-o",
    `${partial}/`,
    ...BINARIES.map((b) => `./cmd/${b}`),
  ];
  process.stdout.write(`kube:build ${version}: go build in ${relative(root, dir)} (one at a time, niced)\n`);
  const r = spawnSync("nice", args, {
    cwd: dir,
    stdio: "inherit",
    env: { ...process.env, CGO_ENABLED: "0" },
  });
  if (r.error) throw new Error(`could not run go: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`go build for ${version} failed (exit ${r.status ?? r.signal})`);
  rmSync(out, { recursive: true, force: true });
  renameSync(partial, out);
  writeFileSync(stampFile, `${stamp}\n`);
  return `${version}: built in ${Math.round((Date.now() - started) / 1000)} s into ${out}`;
}

function main() {
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  if (go.error || go.status !== 0) {
    process.stderr.write("kube:build: Go is not on PATH; it is needed to build kube-apiserver and etcd\n");
    return 1;
  }
  try {
    for (const release of releases(process.argv.slice(2)))
      process.stdout.write(`kube:build ${buildRelease(release)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`kube:build: ${e.message}\n`);
    return 1;
  }
}

process.exitCode = main();
