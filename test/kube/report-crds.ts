/**
 * The CustomResourceDefinitions of the report formats `celgate audit` writes, as their projects
 * publish them, so that the real API server judges the reports against the real schemas:
 *
 * - `wgpolicyk8s.io/v1alpha2` PolicyReport and ClusterPolicyReport: the CRDs Kyverno installs
 *   (config/crds/policyreport/ of github.com/kyverno/kyverno); the wg-policy-prototypes repository
 *   that defines them is not served by the Go module proxy.
 * - `openreports.io/v1alpha1` Report and ClusterReport: config/crd/ of
 *   github.com/openreports/reports-api.
 *
 * Both are Go modules: `go mod download` fetches each pinned version once per machine into Go's
 * module cache (as `npm run kube:build` fetches Kubernetes), its hash checked against the one pinned
 * here, and nothing of them is kept in this repository.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

interface Pinned {
  readonly module: string;
  readonly version: string;
  /** The module zip's hash, as go.sum records it. */
  readonly sum: string;
  readonly files: readonly string[];
}

const POLICY_REPORT: Pinned = {
  module: "github.com/kyverno/kyverno",
  version: "v1.19.1",
  sum: "h1:/MkgFii3/VlQfKR1JpC9tVwNNVNQTt2S4U6qCsafsTU=",
  files: [
    "config/crds/policyreport/wgpolicyk8s.io_policyreports.yaml",
    "config/crds/policyreport/wgpolicyk8s.io_clusterpolicyreports.yaml",
  ],
};

const OPEN_REPORTS: Pinned = {
  module: "github.com/openreports/reports-api",
  version: "v0.2.1",
  sum: "h1:g9KS3yle9Y1elmww4TK9EkD1rl6inIaiIJPX6e+u680=",
  files: ["config/crd/openreports.io_reports.yaml", "config/crd/openreports.io_clusterreports.yaml"],
};

const DOWNLOAD_TIMEOUT_MS = 300_000;

function download(p: Pinned): string[] {
  const r = spawnSync("go", ["mod", "download", "-json", `${p.module}@${p.version}`], {
    encoding: "utf8",
    timeout: DOWNLOAD_TIMEOUT_MS,
    // Outside any module: only this module's zip is fetched, none of its dependencies.
    cwd: "/",
    env: { ...process.env, GOFLAGS: "-mod=mod" },
  });
  if (r.error) throw r.error;
  const info = JSON.parse(r.stdout || "{}") as { Dir?: string; Sum?: string; Error?: string };
  if (r.status !== 0 || info.Dir === undefined)
    throw new Error(`go mod download ${p.module}@${p.version}: ${info.Error ?? r.stderr}`);
  if (info.Sum !== p.sum) throw new Error(`${p.module}@${p.version}: hash ${info.Sum}, pinned ${p.sum}`);
  const dir = info.Dir;
  return p.files.map((f) => readFileSync(join(dir, f), "utf8"));
}

/** The two formats' CRDs as YAML text: `policyreport` (wgpolicyk8s.io) and `openreports`. */
export function reportCrds(): { readonly policyreport: string[]; readonly openreports: string[] } {
  return { policyreport: download(POLICY_REPORT), openreports: download(OPEN_REPORTS) };
}

/** Where they come from, for a test's name. */
export const REPORT_CRD_SOURCES = `${POLICY_REPORT.module}@${POLICY_REPORT.version}, ${OPEN_REPORTS.module}@${OPEN_REPORTS.version}`;
