/**
 * Acceptance, differential: for each release tools/kube/ builds, every admission policy and
 * binding in policies/, the public-policy fixtures and the README/docs examples is created on the
 * real kube-apiserver with server-side dry run (`?dryRun=All`) and checked by `celgate check
 * --kubernetes-version X.Y` (its `main`, in-process): the same accept or refuse, and for refusals
 * the same causes (compare.ts says how they are normalised). Each ValidatingAdmissionPolicy the
 * server accepts is then created for real, so that kube-controller-manager's status controller
 * writes `status.typeChecking`, which is compared with check's schema warnings, and deleted. A
 * generated corpus of expressions (corpus.ts) is compared the same way, expression by expression.
 *
 * Every difference is either in KNOWN below, with its reason, or fails the test. One summary line
 * per release says how many inputs were compared and how many agreed; CELGATE_KUBE_REPORT=FILE
 * writes every difference (known ones too) as JSON.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { stringify } from "yaml";
import { DEFAULT_RELEASE, RELEASES } from "../../src/cel/index.ts";
import { type ControlPlane, kubeReleases, startControlPlane } from "../helpers/kube-control-plane.ts";
import {
  createObject,
  deleteObject,
  getObject,
  type KubeManifest,
  Resources,
  waitFor,
} from "../helpers/kube-objects.ts";
import { cli } from "../unit/cli/fake-io.ts";
import {
  type CheckDiagnostic,
  type Aspect,
  type Difference,
  celgateTypeWarnings,
  celgateVerdict,
  compareTypeWarnings,
  compareVerdicts,
  serverTypeWarnings,
  serverVerdict,
} from "./compare.ts";
import { acceptanceCorpus, corpusPolicies, SYNTAX_ERRORS } from "./corpus.ts";
import { type AcceptanceInput, acceptanceInputs } from "./inputs.ts";

/**
 * The differences known and not (yet) fixed, each with why: the single table of them. `input` is
 * an input's name, or "corpus"; `field`, `expression` and `server` (a pattern of the server's text)
 * narrow an entry when given. `releases` limits it to some server versions.
 */
interface Known {
  readonly input: string;
  readonly aspect: Aspect;
  readonly field?: string;
  readonly expression?: string;
  readonly server?: RegExp;
  readonly releases?: readonly string[];
  readonly reason: string;
}

const KNOWN: readonly Known[] = ["metadata.ownerReferences.uid", "metadata.ownerReferences[0].uid"].map(
  (field): Known => ({
    input: "test/fixtures/public-policies/kyverno-block-exec-in-pods.yaml",
    aspect: "message",
    field,
    releases: ["v1.36.3"],
    reason:
      "both refuse the owner reference without a uid (apimachinery ValidateOwnerReferences); 1.36.3 names the field without its index (metadata.ownerReferences.uid), 1.37.2 and check with it (metadata.ownerReferences[0].uid)",
  }),
);

const CORPUS_SEED = 33;
const CORPUS_GENERATED = 1000;
const CORPUS_CALLS = 1200;
const PER_POLICY = 50;
const CONCURRENCY = 4;

const ADMISSION_KINDS = new Set([
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
]);

function isAdmissionObject(m: KubeManifest): boolean {
  return (
    typeof m.apiVersion === "string" &&
    m.apiVersion.startsWith("admissionregistration.k8s.io/") &&
    typeof m.kind === "string" &&
    ADMISSION_KINDS.has(m.kind)
  );
}

function nameOf(m: KubeManifest): string {
  return typeof m.metadata?.name === "string" ? m.metadata.name : "";
}

async function checkFile(file: string, release: string): Promise<CheckDiagnostic[]> {
  const run = await cli(["check", "-o", "json", "--kubernetes-version", release, file]);
  assert.ok(run.code === 0 || run.code === 1, `check ${file} ran (exit ${run.code}): ${run.stderr}`);
  return (JSON.parse(run.stdout) as { diagnostics: CheckDiagnostic[] }).diagnostics;
}

/** Runs `f` over `items`, at most `limit` at a time, results in order. */
async function pool<T, R>(items: readonly T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

function knownFor(d: Difference, version: string, expression?: string): Known | undefined {
  return KNOWN.find(
    (k) =>
      k.input === d.input &&
      k.aspect === d.aspect &&
      (k.field === undefined || k.field === d.field) &&
      (k.expression === undefined || k.expression === expression) &&
      (k.server === undefined || k.server.test(d.server)) &&
      (k.releases === undefined || k.releases.includes(version)),
  );
}

interface Tally {
  /** The server's version, which KNOWN entries may be limited to. */
  readonly version: string;
  compared: number;
  agreed: number;
  /** Of those compared, how many the server said something about (refused, or warned about). */
  nonEmpty: number;
  readonly differences: (Difference & { expression?: string; known?: string })[];
}

function record(tally: Tally, diffs: readonly Difference[], nonEmpty: boolean, expression?: string): void {
  tally.compared++;
  if (nonEmpty) tally.nonEmpty++;
  if (diffs.length === 0) tally.agreed++;
  for (const d of diffs) {
    const known = knownFor(d, tally.version, expression);
    tally.differences.push({
      ...d,
      ...(expression === undefined ? {} : { expression }),
      ...(known ? { known: known.reason } : {}),
    });
  }
}

async function establishCrds(
  plane: ControlPlane,
  resources: Resources,
  crds: readonly KubeManifest[],
): Promise<void> {
  for (const crd of crds) {
    const r = await createObject(plane, resources, crd, { dryRun: false });
    assert.ok(r.served && r.status === 201, `CRD ${nameOf(crd)} created: ${JSON.stringify(r)}`);
    await waitFor(
      `CRD ${nameOf(crd)} Established`,
      () => getObject(plane, resources, crd),
      (o) =>
        (
          (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []
        ).some((c) => c.type === "Established" && c.status === "True"),
    );
    const spec = crd.spec as { group?: string; versions?: { name: string }[] } | undefined;
    for (const v of spec?.versions ?? []) resources.forget(`${spec?.group}/${v.name}`);
  }
}

/** One input: dry-run verdicts per admission object, then typeChecking of the VAPs the server accepts. */
async function compareInput(
  plane: ControlPlane,
  resources: Resources,
  input: AcceptanceInput,
  release: string,
  tally: Tally,
  typeTally: Tally,
): Promise<void> {
  const diagnostics = await checkFile(input.file, release);
  const loose = diagnostics.filter((d) => d.object === undefined && d.severity === "error");
  const crds = input.manifests.filter((m) => m.kind === "CustomResourceDefinition");
  await establishCrds(plane, resources, crds);
  try {
    const accepted: KubeManifest[] = [];
    for (const m of input.manifests.filter(isAdmissionObject)) {
      const object = `${String(m.kind)}/${nameOf(m)}`;
      const own = diagnostics.filter((d) => d.object?.kind === m.kind && d.object?.name === nameOf(m));
      const server = serverVerdict(await createObject(plane, resources, m, { dryRun: true }));
      const celgate = celgateVerdict([...own, ...loose]);
      record(tally, compareVerdicts(input.name, object, server, celgate), !server.accepted);
      if (server.accepted && m.kind === "ValidatingAdmissionPolicy") accepted.push(m);
    }
    await Promise.all(
      accepted.map((m) => compareTypeChecking(plane, resources, input, m, diagnostics, typeTally)),
    );
  } finally {
    for (const crd of crds) await deleteObject(plane, resources, crd);
  }
}

async function compareTypeChecking(
  plane: ControlPlane,
  resources: Resources,
  input: AcceptanceInput,
  m: KubeManifest,
  diagnostics: readonly CheckDiagnostic[],
  tally: Tally,
): Promise<void> {
  const r = await createObject(plane, resources, m, { dryRun: false });
  assert.ok(r.served && r.status === 201, `${nameOf(m)} created for real: ${JSON.stringify(r)}`);
  try {
    const stored = await waitFor(
      `${nameOf(m)}'s status.observedGeneration`,
      () => getObject(plane, resources, m),
      (o) => ((o?.status as { observedGeneration?: number } | undefined)?.observedGeneration ?? 0) >= 1,
      60_000,
    );
    const own = diagnostics.filter((d) => d.object?.kind === m.kind && d.object?.name === nameOf(m));
    const warnings = serverTypeWarnings(stored?.status);
    record(
      tally,
      compareTypeWarnings(input.name, `${String(m.kind)}/${nameOf(m)}`, warnings, celgateTypeWarnings(own)),
      warnings.length > 0,
    );
  } finally {
    await deleteObject(plane, resources, m);
  }
}

function listing(tally: Tally): string {
  return tally.differences
    .filter((d) => d.known === undefined)
    .map(
      (d) =>
        `- ${d.input} ${d.object} [${d.aspect}] ${d.field}${d.expression ? ` (expression: ${d.expression})` : ""}\n` +
        `    server:  ${d.server.replaceAll("\n", "\n             ")}\n` +
        `    celgate: ${d.celgate.replaceAll("\n", "\n             ")}`,
    )
    .join("\n");
}

const releases = kubeReleases();

void test("the kube suite has releases to run against, built", () => {
  assert.ok(releases.length > 0, "tools/kube/ holds no release module");
  for (const r of releases)
    assert.ok(r.built, `${r.version} is not built in ${r.binDir}: run \`npm run kube:build\` (needs Go)`);
});

for (const release of releases.filter((r) => r.built)) {
  // A server of a release celgate does not model is compared with the default release.
  const celgateRelease = RELEASES.includes(release.minor) ? release.minor : DEFAULT_RELEASE;

  void describe(`Acceptance: kube-apiserver ${release.version} against check --kubernetes-version ${celgateRelease}`, () => {
    let plane: ControlPlane;
    let resources: Resources;
    let temp = "";
    const results = {
      objects: { version: release.version, compared: 0, agreed: 0, nonEmpty: 0, differences: [] } as Tally,
      typeChecking: {
        version: release.version,
        compared: 0,
        agreed: 0,
        nonEmpty: 0,
        differences: [],
      } as Tally,
      corpus: { version: release.version, compared: 0, agreed: 0, nonEmpty: 0, differences: [] } as Tally,
    };

    before(async () => {
      temp = await mkdtemp(join(tmpdir(), "celgate-acceptance-"));
      plane = await startControlPlane({ release, controllerManager: true });
      resources = new Resources(plane);
    });

    after(async () => {
      await plane?.stop();
      if (temp) await rm(temp, { recursive: true, force: true });
      const all = Object.values(results).flatMap((t) => t.differences);
      const count = (t: Tally) =>
        `${t.compared} compared (${t.nonEmpty} refused or warned by the server), ${t.agreed} agreed`;
      console.log(
        `acceptance ${release.version} (check --kubernetes-version ${celgateRelease}): ` +
          `objects ${count(results.objects)}; typeChecking ${count(results.typeChecking)}; ` +
          `corpus expressions ${count(results.corpus)}; ` +
          `${all.filter((d) => d.known).length} known differences, ${all.filter((d) => !d.known).length} unexplained`,
      );
      const report = process.env.CELGATE_KUBE_REPORT;
      if (report)
        await writeFile(`${report}.${release.version}.json`, `${JSON.stringify(results, null, 2)}\n`);
    });

    void test("policies, public fixtures and docs examples: same accept/refuse, causes and typeChecking warnings", async () => {
      const inputs = await acceptanceInputs(temp);
      assert.ok(inputs.length > 20, `found the inputs (${inputs.length})`);
      for (const input of inputs)
        await compareInput(plane, resources, input, celgateRelease, results.objects, results.typeChecking);
      const unexplained = [results.objects, results.typeChecking].map(listing).filter((s) => s !== "");
      assert.equal(unexplained.join("\n"), "", "every difference is known");
    });

    void test(`a generated corpus of ${CORPUS_GENERATED + CORPUS_CALLS + SYNTAX_ERRORS.length} expressions: same accept/refuse and message`, async () => {
      const expressions = acceptanceCorpus(CORPUS_GENERATED, CORPUS_CALLS, CORPUS_SEED);
      assert.ok(expressions.length >= 1000, `the corpus has ${expressions.length} expressions`);
      const corpus = corpusPolicies(expressions, PER_POLICY);
      const file = join(temp, "corpus.yaml");
      await writeFile(file, corpus.policies.map((p) => stringify(p)).join("---\n"));
      const diagnostics = await checkFile(file, celgateRelease);
      const answers = await pool(corpus.policies, CONCURRENCY, async (p) => ({
        name: nameOf(p),
        verdict: serverVerdict(await createObject(plane, resources, p, { dryRun: true })),
      }));
      const byPolicy = new Map(answers.map((a) => [a.name, a.verdict]));
      for (const c of corpus.cases) {
        const verdict = byPolicy.get(c.policy);
        assert.ok(verdict, `the server answered for ${c.policy}`);
        const serverCauses = verdict.causes.filter((x) => x.field === c.field);
        const own = diagnostics.filter((d) => d.object?.name === c.policy && d.path === c.field);
        const celgate = celgateVerdict(own);
        const server = { accepted: serverCauses.length === 0, causes: serverCauses };
        record(
          results.corpus,
          compareVerdicts("corpus", `${c.policy} ${c.field}`, server, celgate),
          !server.accepted,
          c.expression,
        );
      }
      // A refusal the server gave without field causes (or at another field) would be lost above.
      for (const a of answers)
        for (const cause of a.verdict.causes)
          assert.ok(
            corpus.cases.some((c) => c.policy === a.name && c.field === cause.field),
            `${a.name}: the server refused at ${cause.field || "(no field)"}: ${cause.text}`,
          );
      assert.equal(listing(results.corpus), "", "every difference is known");
    });
  });
}
