/**
 * `npm run kube:build [-- v1.37 ...]`: builds the real control plane of each Kubernetes release
 * under tools/kube/ (one Go module per release: kube-apiserver, etcd, kube-controller-manager),
 * and kubectl from tools/kubectl/ (its own module, so that adding it rebuilds no API server), into
 * the cache of tools/kube-cache.mjs (outside the repository, shared by every clone on the machine),
 * where test/helpers/kube-control-plane.ts finds them.
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
const kubectlDir = join(root, "tools", "kubectl");
export const BINARIES = ["kube-apiserver", "etcd", "kube-controller-manager"];

/** The k8s.io/kubernetes version a release module requires (`v1.37.2`). */
function kubernetesVersion(goMod) {
  const m = /^\s*k8s\.io\/kubernetes (v1\.\d+\.\d+)\s*$/m.exec(goMod);
  if (!m) throw new Error("go.mod requires no k8s.io/kubernetes vX.Y.Z");
  return m[1];
}

/** The Kubernetes release of the k8s.io/kubectl module tools/kubectl requires (v0.37.2 → `v1.37.2`). */
function kubectlVersion(goMod) {
  const m = /^\s*k8s\.io\/kubectl v0\.(\d+)\.(\d+)\s*$/m.exec(goMod);
  if (!m) throw new Error("tools/kubectl/go.mod requires no k8s.io/kubectl v0.Y.Z");
  return `v1.${m[1]}.${m[2]}`;
}

/** Every file the binaries are built from, hashed, with the flags: a change rebuilds. */
function stampOf(dir, files, flags) {
  const hash = createHash("sha256").update(flags.join("\0"));
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
  const asked = names.filter((n) => n !== "kubectl");
  const unknown = asked.filter((n) => !all.includes(n));
  if (unknown.length > 0)
    throw new Error(`no module tools/kube/${unknown[0]} (have ${all.join(", ")}, kubectl)`);
  return (names.length > 0 ? asked : all).sort();
}

/**
 * Builds `packages` of the module in `dir` (the binaries `binaries`) into `out` unless they are
 * there and current (the stamp of `files` and the flags); returns what it did, for the one line printed.
 */
function buildModule({ dir, version, out, packages, binaries, files }) {
  const flags = buildFlags(version);
  const stamp = stampOf(dir, files, flags);
  const stampFile = join(out, "stamp");
  const present = binaries.every((b) => existsSync(join(out, b)));
  if (present && existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === stamp)
    return `present in ${out}, nothing to build`;

  const partial = `${out}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const started = Date.now();
  const args = ["-n", "10", "go", "build", ...flags, "-o", `${partial}/`, ...packages];
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
  return `built in ${Math.round((Date.now() - started) / 1000)} s into ${out}`;
}

/** Builds one release's control plane unless it is current. */
function buildRelease(release) {
  const dir = join(modulesDir, release);
  const version = kubernetesVersion(readFileSync(join(dir, "go.mod"), "utf8"));
  const files = ["go.mod", "go.sum", ...BINARIES.map((b) => join("cmd", b, "main.go"))];
  const done = buildModule({
    dir,
    version,
    out: join(kubeCacheDir(), version),
    packages: BINARIES.map((b) => `./cmd/${b}`),
    binaries: BINARIES,
    files,
  });
  return `${version}: ${done}`;
}

/** Builds kubectl unless it is current: `<cache>/kubectl-<version>/kubectl`. */
function buildKubectl() {
  const version = kubectlVersion(readFileSync(join(kubectlDir, "go.mod"), "utf8"));
  const done = buildModule({
    dir: kubectlDir,
    version,
    out: join(kubeCacheDir(), `kubectl-${version}`),
    // The main package's binary is named after the module path's last element: kubectl.
    packages: ["."],
    binaries: ["kubectl"],
    files: ["go.mod", "go.sum", "main.go"],
  });
  return `kubectl ${version}: ${done}`;
}

function main() {
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  if (go.error || go.status !== 0) {
    process.stderr.write("kube:build: Go is not on PATH; it is needed to build kube-apiserver and etcd\n");
    return 1;
  }
  try {
    const names = process.argv.slice(2);
    for (const release of releases(names)) process.stdout.write(`kube:build ${buildRelease(release)}\n`);
    if (names.length === 0 || names.includes("kubectl"))
      process.stdout.write(`kube:build ${buildKubectl()}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`kube:build: ${e.message}\n`);
    return 1;
  }
}

process.exitCode = main();
