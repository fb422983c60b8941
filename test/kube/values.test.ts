/**
 * Values, differential: a seeded CEL fuzzer. Generated expressions (values-gen.ts) are evaluated by
 * the real kube-apiserver, inside ValidatingAdmissionPolicies on a server-side dry-run request, and
 * by celgate's engine on the same policies and request; their values (rendered with their types by
 * values-render.ts), error texts, cost-limit errors and the request's verdict must agree.
 * values-batch.ts says how the server gives each of them back.
 *
 * An expression celgate's checker refuses is left out of its batch (Acceptance compares refusals);
 * one the API server refuses and celgate accepts is a difference of aspect "accept".
 *
 * CELGATE_FUZZ_SEED sets the seed (printed either way); CELGATE_FUZZ_COUNT the number of
 * expressions per round; CELGATE_FUZZ_SECONDS=N runs further rounds, each with the next seed,
 * until N seconds have passed (nightly use). CELGATE_KUBE_REPORT=FILE writes every difference as
 * JSON. Every difference is in KNOWN, with its reason, or fails the test.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { NEWEST_RELEASE, RELEASES } from "../../src/cel/index.ts";
import { type ControlPlane, kubeReleases, startControlPlane } from "../helpers/kube-control-plane.ts";
import { createObject, type KubeManifest, Resources } from "../helpers/kube-objects.ts";
import {
  type Batch,
  batchObject,
  batchPolicy,
  celgateDecision,
  celgateRefusals,
  errorProbe,
  PARAMS,
  recordWarnings,
  variableIndex,
} from "./values-batch.ts";
import { valueExpressions } from "./values-gen.ts";

type Aspect = "accept" | "value" | "error" | "verdict";

interface Known {
  readonly aspect: Aspect;
  /** A pattern of the expression, of the server's answer, of celgate's. */
  readonly expression?: RegExp;
  readonly server?: RegExp;
  readonly celgate?: RegExp;
  readonly releases?: readonly string[];
  readonly reason: string;
}

/** The differences known and not (yet) fixed, each with why. */
const KNOWN: readonly Known[] = [];

const DEFAULT_SEED = 33_000;
const DEFAULT_COUNT = 10_000;
const PER_BATCH = 40;
const DEPTH = 2;
const CONCURRENCY = 4;
const READY_ATTEMPTS = 20;

interface Difference {
  readonly batch: string;
  readonly aspect: Aspect;
  readonly expression: string;
  readonly server: string;
  readonly celgate: string;
  known?: string;
}

interface Tally {
  readonly version: string;
  compared: number;
  agreed: number;
  values: number;
  errors: number;
  refusedByCelgate: number;
  requests: number;
  truncatedWarnings: number;
  readonly differences: Difference[];
}

function knownFor(d: Difference, version: string): Known | undefined {
  return KNOWN.find(
    (k) =>
      k.aspect === d.aspect &&
      (k.expression === undefined || k.expression.test(d.expression)) &&
      (k.server === undefined || k.server.test(d.server)) &&
      (k.celgate === undefined || k.celgate.test(d.celgate)) &&
      (k.releases === undefined || k.releases.includes(version)),
  );
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

function envNumber(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  assert.ok(Number.isInteger(n) && n >= 0, `${name} must be a whole number, not ${JSON.stringify(v)}`);
  return n;
}

interface StatusCause {
  readonly field?: string;
  readonly message?: string;
}

/**
 * Creates the batch's policy and binding; expressions the server refuses at their variable are
 * recorded as differences (celgate accepted them) and left out, and the create is tried again.
 */
async function installBatch(
  plane: ControlPlane,
  resources: Resources,
  batch: Batch,
  tally: Tally,
): Promise<Batch> {
  let current = batch;
  for (;;) {
    const [policy, binding] = batchPolicy(current, DEPTH) as [KubeManifest, KubeManifest];
    const r = await createObject(plane, resources, policy, { dryRun: false });
    assert.ok(r.served, "ValidatingAdmissionPolicy v1 is served");
    if (r.status === 201) {
      const b = await createObject(plane, resources, binding, { dryRun: false });
      assert.ok(b.served && b.status === 201, `binding ${batch.name} created: ${JSON.stringify(b)}`);
      return current;
    }
    const causes = (r.body as { details?: { causes?: StatusCause[] } }).details?.causes ?? [];
    const refused = new Map<number, string>();
    for (const c of causes) {
      const m = /^spec\.variables\[(\d+)\]\.expression$/.exec(c.field ?? "");
      const j = m ? Number(m[1]) - variableIndex(0) : -1;
      if (j >= 0 && j < current.expressions.length) refused.set(j, c.message ?? "");
    }
    assert.ok(
      refused.size > 0,
      `${batch.name} refused, not at a generated expression: ${r.status} ${JSON.stringify(r.body).slice(0, 2000)}`,
    );
    for (const [j, text] of refused)
      tally.differences.push({
        batch: batch.name,
        aspect: "accept",
        expression: current.expressions[j] as string,
        server: text,
        celgate: "(accepted)",
      });
    current = { ...current, expressions: current.expressions.filter((_, j) => !refused.has(j)) };
  }
}

interface ServerAnswer {
  readonly attempt: number;
  readonly status: number;
  readonly message: string;
  readonly warnings: readonly string[];
  readonly annotations: Readonly<Record<string, string>>;
}

/** Sends each batch's request until its policy is in force (its `ready` annotation is there), bounded. */
async function askServer(
  plane: ControlPlane,
  resources: Resources,
  batches: readonly Batch[],
  tally: Tally,
): Promise<Map<string, ServerAnswer>> {
  const answers = new Map<string, ServerAnswer>();
  let pending = [...batches];
  for (let attempt = 0; attempt < READY_ATTEMPTS && pending.length > 0; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 500));
    const sent = await pool(pending, CONCURRENCY, async (b) => {
      const r = await createObject(plane, resources, batchObject(b, attempt), { dryRun: true });
      assert.ok(r.served);
      tally.requests++;
      const body = r.body as { message?: string };
      return {
        batch: b,
        status: r.status,
        message: r.status === 201 ? "" : String(body.message),
        warnings: r.warnings,
      };
    });
    const events = await plane.readAudit();
    const byName = new Map<string, Record<string, string>>();
    for (const e of events) {
      const ref = e.objectRef as { resource?: string; name?: string } | undefined;
      if (ref?.resource === "configmaps" && e.stage === "ResponseComplete" && ref.name)
        byName.set(ref.name, (e.annotations ?? {}) as Record<string, string>);
    }
    const next: Batch[] = [];
    for (const s of sent) {
      const annotations = byName.get(`${s.batch.name}-${attempt}`) ?? {};
      if (annotations[`${s.batch.name}/ready`] === undefined) next.push(s.batch);
      else
        answers.set(s.batch.name, {
          attempt,
          status: s.status,
          message: s.message,
          warnings: s.warnings,
          annotations,
        });
    }
    pending = next;
  }
  assert.equal(pending.map((b) => b.name).join(", "), "", "every batch's policy came into force");
  return answers;
}

function compareBatch(batch: Batch, answer: ServerAnswer, release: string, tally: Tally): void {
  const decision = celgateDecision(batch, DEPTH, release, answer.attempt);
  const celgateStatus = decision.allowed ? 201 : (decision.status?.code ?? 0);
  const celgateMessage = decision.allowed ? "" : (decision.status?.message ?? "");
  const recorded = recordWarnings(decision.warnings);
  if (recorded.truncated) tally.truncatedWarnings++;
  const diff = (aspect: Aspect, expression: string, server: string, celgate: string) =>
    tally.differences.push({ batch: batch.name, aspect, expression, server, celgate });
  if (answer.status !== celgateStatus || answer.message !== celgateMessage)
    diff(
      "verdict",
      "(the request)",
      `${answer.status} ${answer.message}`,
      `${celgateStatus} ${celgateMessage}`,
    );
  batch.expressions.forEach((expression, j) => {
    const key = `${batch.name}/g${j}`;
    const probe = `'${errorProbe(j)}'`;
    const sv = answer.annotations[key];
    const cv = decision.auditAnnotations[key];
    const sw = answer.warnings.find((w) => w.includes(probe));
    const cw = recorded.warnings.find((w) => w.includes(probe));
    tally.compared++;
    if (sv !== undefined) tally.values++;
    if (sw !== undefined) tally.errors++;
    let agreed = true;
    if (sv !== cv) {
      diff("value", expression, sv ?? "(no value)", cv ?? "(no value)");
      agreed = false;
    }
    if (sw !== cw) {
      diff("error", expression, sw ?? "(no error)", cw ?? "(no error)");
      agreed = false;
    }
    if (agreed) tally.agreed++;
  });
  // A warning that names no expression of the batch would be lost above.
  for (const w of answer.warnings)
    assert.ok(
      batch.expressions.some((_, j) => w.includes(`'${errorProbe(j)}'`)) || recorded.warnings.includes(w),
      `${batch.name}: a warning of no expression: ${w}`,
    );
}

/** One round: `count` expressions from `seed`, installed, asked of both sides and compared. */
async function round(
  plane: ControlPlane,
  resources: Resources,
  seed: number,
  count: number,
  release: string,
  tally: Tally,
): Promise<void> {
  const expressions = valueExpressions(count, seed);
  const batches: Batch[] = [];
  for (let start = 0; start < expressions.length; start += PER_BATCH) {
    const name = `vz-${seed}-${String(batches.length).padStart(3, "0")}`;
    const all: Batch = { name, expressions: expressions.slice(start, start + PER_BATCH) };
    const refusals = celgateRefusals(all, DEPTH, release);
    assert.deepEqual(refusals.other, [], `${name}: celgate refuses only generated expressions`);
    tally.refusedByCelgate += refusals.byExpression.size;
    batches.push({ name, expressions: all.expressions.filter((_, j) => !refusals.byExpression.has(j)) });
  }
  const installed = await pool(batches, CONCURRENCY, (b) => installBatch(plane, resources, b, tally));
  const answers = await askServer(plane, resources, installed, tally);
  for (const b of installed) compareBatch(b, answers.get(b.name) as ServerAnswer, release, tally);
  // The next round's policies must not meet these: delete them without waiting.
  await pool(installed, CONCURRENCY, async (b) => {
    for (const path of [
      `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${b.name}`,
      `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${b.name}`,
    ])
      await plane.request("DELETE", path);
  });
}

function listing(tally: Tally): string {
  return tally.differences
    .filter((d) => d.known === undefined)
    .slice(0, 40)
    .map(
      (d) =>
        `- ${d.batch} [${d.aspect}] ${d.expression}\n    server:  ${d.server}\n    celgate: ${d.celgate}`,
    )
    .join("\n");
}

const releases = kubeReleases().filter((r) => r.built);
const seed = envNumber("CELGATE_FUZZ_SEED", DEFAULT_SEED);
const count = envNumber("CELGATE_FUZZ_COUNT", DEFAULT_COUNT);
const seconds = envNumber("CELGATE_FUZZ_SECONDS", 0);

for (const release of releases) {
  const celgateRelease = RELEASES.includes(release.minor) ? release.minor : NEWEST_RELEASE;

  void describe(`Values: kube-apiserver ${release.version} against celgate's engine (${celgateRelease})`, () => {
    let plane: ControlPlane;
    let resources: Resources;
    let temp = "";
    const tally: Tally = {
      version: release.version,
      compared: 0,
      agreed: 0,
      values: 0,
      errors: 0,
      refusedByCelgate: 0,
      requests: 0,
      truncatedWarnings: 0,
      differences: [],
    };

    before(async () => {
      // Metadata for every request (a later flag wins): the policies' bodies would make the audit log huge.
      temp = await mkdtemp(join(tmpdir(), "celgate-values-"));
      const auditPolicy = join(temp, "audit-policy.yaml");
      await writeFile(
        auditPolicy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n",
      );
      plane = await startControlPlane({ release, apiserverArgs: [`--audit-policy-file=${auditPolicy}`] });
      resources = new Resources(plane);
    });

    after(async () => {
      await plane?.stop();
      if (temp) await rm(temp, { recursive: true, force: true });
      for (const d of tally.differences) {
        const k = knownFor(d, tally.version);
        if (k) d.known = k.reason;
      }
      const unexplained = tally.differences.filter((d) => !d.known).length;
      const differing = tally.compared - tally.agreed;
      console.log(
        `values ${release.version} (celgate ${celgateRelease}), seed ${seed}: ${tally.compared} expressions compared ` +
          `(${tally.values} with a value, ${tally.errors} with an error) in ${tally.requests} requests, ` +
          `${tally.agreed} agreed; disagreement rate ${((100 * differing) / Math.max(1, tally.compared)).toFixed(2)}%; ` +
          `${tally.refusedByCelgate} refused by celgate's checker and left out; ` +
          `${tally.differences.length - unexplained} known differences, ${unexplained} unexplained; ` +
          `${tally.truncatedWarnings} batches with truncated warnings`,
      );
      const report = process.env.CELGATE_KUBE_REPORT;
      if (report)
        await writeFile(`${report}.values.${release.version}.json`, `${JSON.stringify(tally, null, 2)}\n`);
    });

    void test(`generated expressions: the same values, errors and verdicts (seed ${seed})`, async () => {
      assert.ok((await createObject(plane, resources, PARAMS, { dryRun: false })).served);
      const deadline = Date.now() + seconds * 1000;
      let s = seed;
      do {
        await round(plane, resources, s, count, celgateRelease, tally);
        s++;
      } while (Date.now() < deadline);
      assert.ok(tally.compared >= Math.min(count, 10_000) * 0.9, `compared ${tally.compared} expressions`);
      for (const d of tally.differences) {
        const k = knownFor(d, tally.version);
        if (k) d.known = k.reason;
      }
      assert.equal(listing(tally), "", "every difference is known");
    });
  });
}
