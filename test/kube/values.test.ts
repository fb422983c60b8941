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
import { type CreateAnswer, createObject, type KubeManifest, Resources } from "../helpers/kube-objects.ts";
import {
  type Batch,
  batchPolicy,
  celgateDecision,
  celgateRefusals,
  groupObject,
  PARAMS,
  PER_POLICY,
  recordWarnings,
  variableIndex,
  warningOf,
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
const KNOWN: readonly Known[] = [
  {
    aspect: "accept",
    server: /^Internal error: program instantiation failed: /,
    reason:
      "cel-go's planner with OptOptimize (Kubernetes' base.go) evaluates a type conversion of a constant (int('x'), uint(-1), string(b'\\xff')) when it builds the program, and the API server refuses the policy if that fails (interpreter/decorators.go maybeOptimizeConstUnary); celgate's checker accepts it and it fails at run time (the same entry as Acceptance's; wp34-releases closes it)",
  },
  {
    aspect: "value",
    expression: /b'|bytes\(|variables\.by/,
    server: /^bytes\|/,
    reason:
      "cel-go's Bytes.Add (common/types/bytes.go) appends to the left operand's backing array, so a later concatenation overwrites an earlier result that shares it (cel-expr/cel-go pull request 1381, merged after v0.29.2: not in Kubernetes 1.36 or 1.37); celgate concatenates into a fresh array, as CEL defines",
  },
  {
    aspect: "value",
    expression: /lists\.range\(-/,
    releases: ["v1.37.2"],
    reason:
      "cel-go v0.29 (Kubernetes 1.37) refuses lists.range of a negative size; celgate models up to 1.36, whose cel-go v0.26 gives an empty list (wp34-releases models 1.37)",
  },
  {
    aspect: "error",
    expression: /lists\.range\(-/,
    releases: ["v1.37.2"],
    reason: "the same as the value of lists.range of a negative size in 1.37",
  },
  {
    aspect: "value",
    expression: /(index|lastIndex)Of\(''/,
    releases: ["v1.37.2"],
    reason:
      "cel-go v0.29 (Kubernetes 1.37) clamps the offset of an empty substring to the string's length (ext/strings.go indexOfOffset, lastIndexOfOffset); celgate models up to 1.36, whose cel-go v0.26 returns the offset (wp34-releases models 1.37)",
  },
];

/** A request's verdict that differs only because one of its expressions differs in a known way. */
const VERDICT_OF_KNOWN =
  "the request's verdict differs because an expression of it differs in a known way (an audit annotation that fails on one side only denies under failurePolicy Fail)";

const DEFAULT_SEED = 33_000;
// Enough that at least 10,000 are compared after the checker's refusals are left out.
const DEFAULT_COUNT = 12_000;
/** Policies (batches) per request. */
const PER_GROUP = 3;
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
  /** Of those, how many the API server was asked about (all, unless a round failed first). */
  refusedCompared: number;
  requests: number;
  truncatedWarnings: number;
  /** Expressions whose error was not compared: a request's warnings were truncated. */
  errorsUnseen: number;
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

const SEND_ATTEMPTS = 3;

/**
 * Creates `m`, sent again (bounded) when the connection is reset: a keep-alive connection the API
 * server closed while idle. A dry run may be sent twice; a real create that got through the first
 * time answers 409 the second, which is taken as created.
 */
async function send(
  plane: ControlPlane,
  resources: Resources,
  m: KubeManifest,
  dryRun: boolean,
): Promise<CreateAnswer> {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await createObject(plane, resources, m, { dryRun });
      if (attempt > 1 && !dryRun && r.served && r.status === 409) return { ...r, status: 201 };
      return r;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (attempt >= SEND_ATTEMPTS || (code !== "ECONNRESET" && code !== "EPIPE")) throw e;
    }
  }
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
    const [policy, binding] = batchPolicy(current) as [KubeManifest, KubeManifest];
    const r = await send(plane, resources, policy, false);
    assert.ok(r.served, "ValidatingAdmissionPolicy v1 is served");
    if (r.status === 201) {
      const b = await send(plane, resources, binding, false);
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

/** A request's batches: the policies whose bindings select its label. */
interface Group {
  readonly name: string;
  readonly batches: readonly Batch[];
}

/** Sends each group's request until all its policies are in force (each warned `ready`), bounded. */
async function askServer(
  plane: ControlPlane,
  resources: Resources,
  groups: readonly Group[],
  tally: Tally,
): Promise<Map<string, ServerAnswer>> {
  const answers = new Map<string, ServerAnswer>();
  let pending = [...groups];
  for (let attempt = 0; attempt < READY_ATTEMPTS && pending.length > 0; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 500));
    const sent = await pool(pending, CONCURRENCY, async (g) => {
      const r = await send(plane, resources, groupObject(g.name, attempt), true);
      assert.ok(r.served);
      tally.requests++;
      const body = r.body as { message?: string };
      const ready = g.batches.every((b) => r.warnings.some((w) => warningOf(w, b.name)));
      return {
        group: g,
        ready,
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
    pending = [];
    for (const s of sent) {
      if (!s.ready) {
        pending.push(s.group);
        continue;
      }
      const annotations = byName.get(`${s.group.name}-${attempt}`);
      assert.ok(annotations, `the audit log has the event of ${s.group.name}-${attempt}`);
      answers.set(s.group.name, {
        attempt,
        status: s.status,
        message: s.message,
        warnings: s.warnings,
        annotations,
      });
    }
  }
  assert.equal(pending.map((g) => g.name).join(", "), "", "every group's policies came into force");
  return answers;
}

function compareGroup(group: Group, answer: ServerAnswer, release: string, tally: Tally): void {
  const decision = celgateDecision(group.name, group.batches, release, answer.attempt);
  const celgateStatus = decision.allowed ? 201 : (decision.status?.code ?? 0);
  // The API server denies by the first denying policy it met, and it meets them in no fixed order
  // (policy/generic/policy_source.go ranges over a map): celgate's message is the one of the policy
  // the server names. The server puts `<resource> "<name>" is forbidden: ` before it
  // (admission.NewForbidden); a webhook's denial is worded by the API server instead.
  const serverMessage = answer.message.replace(/^[a-z0-9.]+ "[^"]*" is forbidden: /, "");
  const named = group.batches.find((b) => serverMessage.startsWith(`ValidatingAdmissionPolicy '${b.name}' `));
  const celgateMessage = decision.allowed
    ? ""
    : ((named ? celgateDecision(group.name, [named], release, answer.attempt) : decision).status?.message ??
      "");
  const recorded = recordWarnings(decision.warnings);
  if (recorded.truncated) tally.truncatedWarnings++;
  const diff = (batch: string, aspect: Aspect, expression: string, server: string, celgate: string) =>
    tally.differences.push({ batch, aspect, expression, server, celgate });
  if (answer.status !== celgateStatus || serverMessage !== celgateMessage)
    diff(
      group.name,
      "verdict",
      "(the request)",
      `${answer.status} ${answer.message}`,
      `${celgateStatus} ${celgateMessage}`,
    );
  for (const batch of group.batches)
    batch.expressions.forEach((expression, j) => {
      const key = `${batch.name}/g${j}`;
      const sv = answer.annotations[key];
      const cv = decision.auditAnnotations[key];
      const sw = answer.warnings.find((w) => warningOf(w, batch.name, j));
      const cw = recorded.warnings.find((w) => warningOf(w, batch.name, j));
      tally.compared++;
      if (sv !== undefined) tally.values++;
      if (sw !== undefined) tally.errors++;
      let agreed = true;
      if (sv !== cv) {
        diff(batch.name, "value", expression, sv ?? "(no value)", cv ?? "(no value)");
        agreed = false;
      }
      // Past 4 Ki runes of warnings the API server drops the later ones, and it meets the
      // policies in no fixed order, so in such a request a warning one side dropped is not seen.
      if (recorded.truncated && (sw === undefined || cw === undefined)) tally.errorsUnseen++;
      else if (sw !== cw) {
        diff(batch.name, "error", expression, sw ?? "(no error)", cw ?? "(no error)");
        agreed = false;
      }
      if (agreed) tally.agreed++;
    });
  const mine = tally.differences.filter(
    (d) => d.batch === group.name || group.batches.some((b) => b.name === d.batch),
  );
  const verdict = mine.find((d) => d.aspect === "verdict");
  const others = mine.filter((d) => d.aspect !== "verdict");
  if (verdict && others.length > 0 && others.every((d) => knownFor(d, tally.version) !== undefined))
    verdict.known = VERDICT_OF_KNOWN;
  // A warning of no expression (nor a ready one) would be lost above.
  for (const w of answer.warnings)
    assert.ok(
      group.batches.some(
        (b) => warningOf(w, b.name) || b.expressions.some((_, j) => warningOf(w, b.name, j)),
      ),
      `${group.name}: a warning of no expression: ${w}`,
    );
}

interface Refused {
  readonly expression: string;
  /** celgate's diagnostic. */
  readonly text: string;
  readonly batch: string;
}

const REFUSED_PER_POLICY = 50;

/**
 * The expressions celgate's checker refused, asked of the API server too (variables of a policy
 * created with dry run): one it accepts is a difference. Their messages are Acceptance's to compare.
 */
async function askRefused(
  plane: ControlPlane,
  resources: Resources,
  refused: readonly Refused[],
  tally: Tally,
): Promise<void> {
  const chunks: Refused[][] = [];
  for (let i = 0; i < refused.length; i += REFUSED_PER_POLICY)
    chunks.push(refused.slice(i, i + REFUSED_PER_POLICY));
  await pool(chunks, CONCURRENCY, async (chunk) => {
    const [policy] = batchPolicy({ name: `vz-refused-${chunk[0]?.batch}`, group: "none", expressions: [] });
    const spec = (policy as { spec: { variables: { name: string; expression: string }[] } }).spec;
    spec.variables.push(...chunk.map((r, j) => ({ name: `g${j}`, expression: r.expression })));
    const r = await send(plane, resources, policy as KubeManifest, true);
    assert.ok(r.served);
    const causes = (r.body as { details?: { causes?: StatusCause[] } }).details?.causes ?? [];
    chunk.forEach((c, j) => {
      tally.refusedCompared++;
      if (!causes.some((x) => x.field === `spec.variables[${variableIndex(j)}].expression`))
        tally.differences.push({
          batch: c.batch,
          aspect: "accept",
          expression: c.expression,
          server: "(accepted)",
          celgate: c.text.trim(),
        });
    });
  });
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
  const refused: Refused[] = [];
  for (let start = 0; start < expressions.length; start += PER_POLICY) {
    const index = batches.length;
    const name = `vz-${seed}-${String(index).padStart(3, "0")}`;
    const group = `vz-${seed}-g${String(Math.floor(index / PER_GROUP)).padStart(3, "0")}`;
    const all: Batch = { name, group, expressions: expressions.slice(start, start + PER_POLICY) };
    const refusals = celgateRefusals(all, release);
    assert.deepEqual(refusals.other, [], `${name}: celgate refuses only generated expressions`);
    tally.refusedByCelgate += refusals.byExpression.size;
    for (const [j, text] of refusals.byExpression)
      refused.push({ expression: all.expressions[j] as string, text, batch: name });
    batches.push({ ...all, expressions: all.expressions.filter((_, j) => !refusals.byExpression.has(j)) });
  }
  await askRefused(plane, resources, refused, tally);
  const installed = await pool(batches, CONCURRENCY, (b) => installBatch(plane, resources, b, tally));
  const groups = new Map<string, Batch[]>();
  for (const b of installed) groups.set(b.group, [...(groups.get(b.group) ?? []), b]);
  const list = [...groups].map(([name, bs]) => ({ name, batches: bs }));
  const answers = await askServer(plane, resources, list, tally);
  for (const g of list) compareGroup(g, answers.get(g.name) as ServerAnswer, release, tally);
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
      refusedCompared: 0,
      requests: 0,
      truncatedWarnings: 0,
      errorsUnseen: 0,
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
        if (k) d.known ??= k.reason;
      }
      const unexplained = tally.differences.filter((d) => !d.known).length;
      const differing = tally.compared - tally.agreed;
      console.log(
        `values ${release.version} (celgate ${celgateRelease}), seed ${seed}: ${tally.compared} expressions compared ` +
          `(${tally.values} with a value, ${tally.errors} with an error) in ${tally.requests} requests, ` +
          `${tally.agreed} agreed; disagreement rate ${((100 * differing) / Math.max(1, tally.compared)).toFixed(2)}%; ` +
          `${tally.refusedByCelgate} refused by celgate's checker (${tally.refusedCompared} of them asked of the server); ` +
          `${tally.differences.length - unexplained} known differences, ${unexplained} unexplained; ` +
          `${tally.truncatedWarnings} requests with truncated warnings (${tally.errorsUnseen} errors not seen)`,
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
      // Every distinct expression is compared: evaluated on both sides, or refused by celgate's checker and asked of the server.
      assert.ok(
        tally.compared + tally.refusedCompared >= count * 0.95,
        `compared ${tally.compared} evaluated and ${tally.refusedCompared} refused expressions of ${count}`,
      );
      for (const d of tally.differences) {
        const k = knownFor(d, tally.version);
        if (k) d.known ??= k.reason;
      }
      assert.equal(listing(tally), "", "every difference is known");
    });
  });
}
