/**
 * Issue 7, target 3: what one admission request costs in-process, against the JSON.parse of its body
 * (the one cost no webhook can avoid). The review is the webhook benchmark's ~4.5 KB Pod. Two policy
 * sets, both loaded from YAML on disk through the loader `serve` uses:
 *   (a) the 20 rules of bench/rules.ts as ONE ValidatingAdmissionPolicy with 20 validations + a binding;
 *   (b) the project's Pod Security policies (baseline + restricted) and the webhook benchmark's common
 *       set (its Namespace and one mutation): what bench/webhook.ts serves.
 * Timed per set: decode + `review({phase: "validate"})` and decode + `review({phase: "mutate"})`.
 * Before timing, each set reviews the **cel** part's 1,000 varied Pods (and the hand-written rules
 * check them), so V8's property caches at every read have seen many shapes of object, as a server's
 * have after a day of varied Pods; a benchmark that only ever saw the one Pod below would time
 * monomorphic reads no server gets (alone it measures about 0.6x of this).
 * Every request gets its own freshly parsed body, parsed just before it and outside the timing, as a
 * webhook reviews the body it has just parsed; no engine cache keyed on object identity can make
 * repeats cheap. (Parsing a round's 2,000 bodies first, as this benchmark did, timed cache misses on
 * tens of megabytes of cold objects and the scavenges that copied them: a review measured 1.4-1.5x
 * what it costs on a body just parsed.) The engine's own code and data stay in the CPU caches from
 * one request to the next here; in a loaded server TLS and HTTP evict them, and a review costs about
 * twice this figure (bench/webhook.ts reports the server's CPU per request).
 *
 * The closures-only tier (CELGATE_CEL_CODEGEN=never, issue 34 item 2): sets (a) and (a1) loaded a
 * second time from sources the compile cache keys apart, warmed, gated and timed only in "never"
 * mode, as jobs of the same rounds; a gate checks their programs never switched to generated code.
 * Set (b) has no such row: its expressions come from the policy files as they are.
 *
 * Also target 6 (patch building): the baseline `structuredClone(pod)` + edit + fast-json-patch
 * `compare`, against the engine's direct patch building (DIRECT_PATCH below).
 *
 * Gates, before timing: the bench Pod is allowed by both sets with every validating policy passing
 * (none skipped or errored), set (b)'s mutate phase yields a patch, and a bad Pod is denied by (a).
 *
 *   node dist-bench/bench/request.js [--rounds 9] [--iterations 2000]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fastJsonPatch from "fast-json-patch";
import { decodeAdmissionReview } from "../src/adapters/admission/codec.ts";
import { parseReviewText } from "../src/adapters/admission/json-text.ts";
import type { CompiledPolicySet } from "../src/compile/policy.ts";
import { type Program, toCel } from "../src/cel/index.ts";
import { type Admitter, createAdmitter } from "../src/adapters/server/admitter.ts";
import { contextFromSet } from "../src/engine/context.ts";
import { kindMergeOf } from "../src/engine/kind-schemas.ts";
import { applyMutation } from "../src/engine/mutate.ts";
import { appendPatch } from "../src/engine/patch.ts";
import type { AdmissionDecision, JsonPatchOp } from "../src/engine/types.ts";
import { loadSnapshot } from "../src/sources/store.ts";
import {
  closuresSource,
  fmtUs,
  fmtX,
  GateError,
  inCodegenMode,
  runPart,
  runPartAlone,
  validatingPolicyYaml,
  intOption,
  isMain,
  median,
  medianRatio,
  nowNs,
  type PartReport,
  rootPath,
  type SummaryRow,
  table,
} from "./common.ts";
import { badPodReview, podReview } from "./review.ts";
import { generatePods, type Pod } from "./corpus.ts";
import { DEFAULT_CEL_BENCH } from "./cel.ts";
import { RULES, type Rule } from "./rules.ts";

type JsonObject = Record<string, unknown>;

/**
 * Target 6's "celgate" figure: the engine's direct patch building for the benchmark mutation (add the
 * `celgate.dev/admitted-by` annotation to the Pod), from the mutation's evaluated result to the patch
 * the webhook sends: applyMutation (the operation applied as the API server applies it, on copies of
 * the containers it touches, and what it wrote checked against the Pod's schema, as the webhook
 * does) and appendPatch. The CEL evaluation itself is left out, as the baseline leaves out deciding
 * what to change.
 */
const BENCH_MUTATION = toCel([
  { op: "add", path: "/metadata/annotations/celgate.dev~1admitted-by", value: "celgate" },
]);

/** The Pod's schema, looked up once as the webhook does per policy set and kind. */
const POD_KIND = kindMergeOf({ group: "", version: "v1", kind: "Pod" });

const DIRECT_PATCH = (pod: JsonObject): readonly JsonPatchOp[] => {
  const r = applyMutation(pod, "JSONPatch", BENCH_MUTATION, POD_KIND);
  if (!r.ok) throw new Error(`patch-direct: ${r.error.message}`);
  const patch: JsonPatchOp[] = [];
  appendPatch(patch, r.value.ops, r.value.object);
  return patch;
};

export interface RequestBenchOptions {
  readonly rounds: number;
  readonly warmupRounds: number;
  /** Requests per job per round. */
  readonly iterations: number;
}

export const DEFAULT_REQUEST_BENCH: RequestBenchOptions = { rounds: 9, warmupRounds: 2, iterations: 2000 };

/** The 20 benchmark rules as one ValidatingAdmissionPolicy and its binding, for Pods on CREATE. */
export function rulesPolicyYaml(rules: readonly Rule[] = RULES, name = "bench-rules"): string {
  return validatingPolicyYaml(
    name,
    { group: "", version: "v1", resource: "pods", operations: ["CREATE"] },
    rules.map((r) => ({ expression: r.cel, message: `${r.name} is not allowed` })),
  );
}

/** Paths of set (b): what bench/webhook.ts serves by default. */
export function podSecurityPaths(): string[] {
  return [
    rootPath("policies", "pod-security-baseline.yaml"),
    rootPath("policies", "pod-security-restricted.yaml"),
    rootPath("test", "fixtures", "webhook", "bench-policies", "common"),
  ];
}

export interface LoadedSet {
  readonly label: string;
  readonly set: CompiledPolicySet;
  readonly admitter: Admitter;
}

/** Loads and compiles through the store's loader; any error diagnostic fails the gate. */
export async function loadSet(label: string, paths: readonly string[]): Promise<LoadedSet> {
  const outcome = await loadSnapshot(paths);
  const diagnostics = outcome.ok ? outcome.snapshot.diagnostics : outcome.diagnostics;
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (!outcome.ok || errors.length > 0)
    throw new GateError(`${label}: does not load: ${errors.map((d) => d.message).join("; ")}`);
  const set = outcome.snapshot.set;
  // As `serve` builds it: namespaces not in the files get only their metadata.name label.
  return { label, set, admitter: createAdmitter(set, contextFromSet(set, { assumeNamespaces: true })) };
}

/**
 * The rules with sources the compile cache keys apart from the baseline's (common.ts
 * closuresSource), for a set that runs on closures only: programs shared with the baseline set
 * would have switched to generated code there.
 */
function closuresRules(rules: readonly Rule[]): Rule[] {
  return rules.map((r) => ({ ...r, cel: closuresSource(r.cel) }));
}

/** Set (a): the 20 rules as one policy of 20 validations; `closures`: its copy for the never tier. */
export async function loadRulesSet(closures = false): Promise<LoadedSet> {
  return closures
    ? loadPolicyYaml("(a) 20 rules, 1 policy, closures only", rulesPolicyYaml(closuresRules(RULES)))
    : loadPolicyYaml("(a) 20 rules, 1 policy", rulesPolicyYaml());
}

/** Every validation program of a set, in order (none when a validation failed to compile). */
export function validationPrograms(s: LoadedSet): (Program | undefined)[] {
  return s.set.policies.flatMap((p) =>
    p.kind === "ValidatingAdmissionPolicy" ? p.validations.map((v) => v.expression.program) : [],
  );
}

/**
 * Problems with a closures-only set: a validation program it shares with its baseline set, or one
 * that has switched to generated code, alone or as its policy's sequence (which "never" mode would
 * still refuse to run, but which means the set ran outside it), would make its row suspect.
 */
export function closuresOnlyProblems(closures: LoadedSet, baseline: LoadedSet): string[] {
  const shared = new Set(validationPrograms(baseline));
  const programs = validationPrograms(closures);
  if (programs.length === 0) return [`${closures.label}: no validation programs`];
  const sequences = closures.set.policies.flatMap((p) =>
    p.kind === "ValidatingAdmissionPolicy" && (p.sequence?.functions ?? 0) > 0
      ? [`${closures.label}: policy ${p.name}'s validations run as generated code (its sequence)`]
      : [],
  );
  return sequences.concat(
    programs.flatMap((p, i) =>
      p === undefined
        ? [`${closures.label}: validation ${i} did not compile`]
        : shared.has(p)
          ? [`${closures.label}: validation ${i} shares its program with ${baseline.label}`]
          : p.generated()
            ? [`${closures.label}: validation ${i} runs as generated code`]
            : [],
    ),
  );
}

/**
 * Set (a) with its 20 rules joined by `&&` into one validation (a reference): the same checks, one
 * program instead of twenty, so the difference is what the engine and generated code spend per
 * expression; it is also larger than V8 optimizes by default (cel/configure.ts).
 */
export async function loadOneExpressionSet(closures = false): Promise<LoadedSet> {
  const joined = RULES.map((r) => `(${r.cel})`).join(" && ");
  const cel = closures ? closuresSource(joined) : joined;
  return loadPolicyYaml(
    `(a1) 20 rules in one expression, 1 policy${closures ? ", closures only" : ""}`,
    rulesPolicyYaml([{ ...(RULES[0] as Rule), cel }], "bench-one"),
  );
}

/** Writes one policy file into a fresh temp directory and loads it; the directory is removed afterwards. */
async function loadPolicyYaml(label: string, yaml: string): Promise<LoadedSet> {
  const dir = mkdtempSync(join(tmpdir(), "celgate-bench-request-"));
  try {
    writeFileSync(join(dir, "policy.yaml"), yaml);
    return await loadSet(label, [dir]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function reviewOnce(
  admitter: Admitter,
  body: unknown,
  phase: "validate" | "mutate",
): AdmissionDecision | string {
  const decoded = decodeAdmissionReview(body);
  if (!decoded.ok) return `decode: ${decoded.error.reason}`;
  // As the webhook reviews at log levels above debug: no trace.
  return admitter.review(decoded.value.request, {
    phase,
    deadline: performance.now() + 10_000,
    trace: false,
  });
}

/** Problems with how a set answers the good and (optionally) the bad review; empty when all is right. */
export function gateProblems(
  s: LoadedSet,
  opts: { readonly expectPatch: boolean; readonly denyBad: boolean },
): string[] {
  const out: string[] = [];
  const good = reviewOnce(s.admitter, podReview(), "validate");
  if (typeof good === "string") return [`${s.label}: ${good}`];
  if (!good.allowed) out.push(`${s.label}: the bench Pod is denied: ${good.status?.message ?? "?"}`);
  const validating = s.set.policies.filter((p) => p.kind === "ValidatingAdmissionPolicy").length;
  const passed = good.results.filter((r) => r.outcome === "pass").length;
  if (validating === 0 || passed !== good.results.length || passed < validating)
    out.push(
      `${s.label}: expected ${validating} validating policies to pass, got ${JSON.stringify(good.results.map((r) => [r.policy, r.outcome, r.reason ?? ""]))}`,
    );
  const mutated = reviewOnce(s.admitter, podReview(), "mutate");
  if (typeof mutated === "string") out.push(`${s.label} mutate: ${mutated}`);
  else if (!mutated.allowed) out.push(`${s.label}: mutate phase denies the bench Pod`);
  else if (opts.expectPatch && (mutated.patch?.length ?? 0) === 0)
    out.push(`${s.label}: mutate gave no patch`);
  if (opts.denyBad) {
    const bad = reviewOnce(s.admitter, badPodReview(), "validate");
    if (typeof bad === "string") out.push(`${s.label} bad Pod: ${bad}`);
    else if (bad.allowed) out.push(`${s.label}: the bad Pod is allowed`);
  }
  return out;
}

interface Job {
  readonly key: string;
  /** Runs `n` requests, returns ns spent in the timed part. */
  readonly run: (n: number) => number;
}

function parseJob(body: string): Job {
  return {
    key: "parse",
    run: (n) => {
      let sink = 0;
      const t0 = nowNs();
      for (let i = 0; i < n; i++) sink += (JSON.parse(body) as { kind: string }).kind.length;
      const dt = Number(nowNs() - t0);
      if (sink !== n * "AdmissionReview".length) throw new Error("parse: wrong result");
      return dt;
    },
  };
}

/**
 * The webhook's own parse of a body (adapters/admission/json-text.ts): the depth check, the pre-scan
 * for numbers JSON.parse would misread, then JSON.parse (the body holds none). Its ratio to the
 * baseline is what reading numbers as the API server does costs an ordinary review.
 */
function reviewParseJob(body: string): Job {
  return {
    key: "review-parse",
    run: (n) => {
      let sink = 0;
      const t0 = nowNs();
      for (let i = 0; i < n; i++) {
        const r = parseReviewText(body);
        if (r.ok) sink += (r.value as { kind: string }).kind.length;
      }
      const dt = Number(nowNs() - t0);
      if (sink !== n * "AdmissionReview".length) throw new GateError("review-parse: wrong result");
      return dt;
    },
  };
}

/**
 * A job that runs `allowedBy` on `n` freshly parsed bodies, one per request as a webhook gets them:
 * each parsed just before its request, outside the timing. Each request is timed on its own, so
 * the figure includes two clock reads (about 0.07 us, against the engine). Fails the gate unless
 * every request is allowed.
 */
function bodiesJob(key: string, body: string, allowedBy: (parsed: unknown) => boolean): Job {
  return {
    key,
    run: (n) => {
      let allowed = 0;
      let dt = 0;
      for (let i = 0; i < n; i++) {
        const parsed: unknown = JSON.parse(body);
        const t0 = nowNs();
        if (allowedBy(parsed)) allowed++;
        dt += Number(nowNs() - t0);
      }
      if (allowed !== n) throw new GateError(`${key}: ${n - allowed} of ${n} requests not allowed`);
      return dt;
    },
  };
}

function reviewJob(key: string, s: LoadedSet, body: string, phase: "validate" | "mutate"): Job {
  return bodiesJob(key, body, (parsed) => {
    const d = reviewOnce(s.admitter, parsed, phase);
    return typeof d !== "string" && d.allowed;
  });
}

/** A review job run wholly in "never" mode: the closures-only tier (CELGATE_CEL_CODEGEN=never). */
function closuresJob(key: string, s: LoadedSet, body: string): Job {
  const job = reviewJob(key, s, body, "validate");
  return { key, run: (n) => inCodegenMode("never", () => job.run(n)) };
}

/**
 * The floor under target 3: decode, then the same 20 checks written by hand in JavaScript over the
 * decoded Pod. No engine can do the rules for less; target 3's budget is measured against it.
 */
function jsRulesJob(body: string): Job {
  return bodiesJob("js-rules", body, (parsed) => {
    const decoded = decodeAdmissionReview(parsed);
    return decoded.ok && RULES.every((r) => r.js(decoded.value.request.object as unknown as Pod));
  });
}

/** The benchmark mutation done the diffing way: clone, edit the clone, compare. */
function diffPatchJob(pod: JsonObject): Job {
  return {
    key: "patch-diff",
    run: (n) => {
      let ops = 0;
      const t0 = nowNs();
      for (let i = 0; i < n; i++) {
        const copy = structuredClone(pod) as { metadata: { annotations: Record<string, string> } };
        copy.metadata.annotations["celgate.dev/admitted-by"] = "celgate";
        ops += fastJsonPatch.compare(pod, copy).length;
      }
      const dt = Number(nowNs() - t0);
      if (ops !== n) throw new Error(`patch-diff: ${ops} operations for ${n} patches`);
      return dt;
    },
  };
}

function directPatchJob(pod: JsonObject, build: (pod: JsonObject) => readonly JsonPatchOp[]): Job {
  return {
    key: "patch-direct",
    run: (n) => {
      let ops = 0;
      const t0 = nowNs();
      for (let i = 0; i < n; i++) ops += build(pod).length;
      const dt = Number(nowNs() - t0);
      if (ops !== n) throw new Error(`patch-direct: ${ops} operations for ${n} patches`);
      return dt;
    },
  };
}

/** Every set reviews the cel part's varied Pods (each as parsed JSON), and the hand-written rules check them. */
function warmOverVariedPods(sets: readonly LoadedSet[]): void {
  const pods = generatePods(DEFAULT_CEL_BENCH.pods, DEFAULT_CEL_BENCH.seed).map(
    (p) => JSON.parse(JSON.stringify(p)) as Pod,
  );
  const decoded = decodeAdmissionReview(podReview());
  if (!decoded.ok) throw new GateError(`warm-up: ${decoded.error.reason}`);
  const base = decoded.value.request;
  for (let round = 0; round < 3; round++)
    for (const pod of pods) {
      const request = { ...base, object: pod as unknown as Record<string, unknown> };
      for (const s of sets)
        for (const phase of ["validate", "mutate"] as const)
          s.admitter.review(request, { phase, deadline: performance.now() + 10_000, trace: false });
      for (const r of RULES) r.js(pod);
    }
}

export interface RequestBenchReport {
  readonly options: RequestBenchOptions;
  readonly bodyBytes: number;
  readonly policies: Readonly<Record<"a" | "b", number>>;
  /** Median ns per request, by job key. */
  readonly ns: Readonly<Record<string, number>>;
  /** Median over rounds of job / parse, by job key. */
  readonly ratio: Readonly<Record<string, number>>;
  readonly spread: Readonly<Record<string, readonly [number, number]>>;
  /** patch-direct / patch-diff; undefined while pending. */
  readonly patchRatio: number | undefined;
}

export async function runRequestBench(
  options: Partial<RequestBenchOptions> = {},
): Promise<RequestBenchReport> {
  const opts = { ...DEFAULT_REQUEST_BENCH, ...options };
  const a = await loadRulesSet();
  const a1 = await loadOneExpressionSet();
  const b = await loadSet("(b) pod-security + common", podSecurityPaths());
  const aNever = await loadRulesSet(true);
  const a1Never = await loadOneExpressionSet(true);
  const problems = [
    ...gateProblems(a, { expectPatch: false, denyBad: true }),
    ...gateProblems(a1, { expectPatch: false, denyBad: true }),
    ...gateProblems(b, { expectPatch: true, denyBad: false }),
    ...inCodegenMode("never", () => [
      ...gateProblems(aNever, { expectPatch: false, denyBad: true }),
      ...gateProblems(a1Never, { expectPatch: false, denyBad: true }),
    ]),
  ];
  if (problems.length > 0) throw new GateError(problems.join("\n"));

  warmOverVariedPods([a, a1, b]);
  inCodegenMode("never", () => warmOverVariedPods([aNever, a1Never]));
  const closuresGate = (): void => {
    const wrong = [...closuresOnlyProblems(aNever, a), ...closuresOnlyProblems(a1Never, a1)];
    if (wrong.length > 0) throw new GateError(wrong.join("\n"));
  };
  closuresGate();
  const body = JSON.stringify(podReview());
  const pod = (podReview() as { request: { object: JsonObject } }).request.object;
  const jobs: Job[] = [
    parseJob(body),
    reviewParseJob(body),
    jsRulesJob(body),
    reviewJob("a-validate", a, body, "validate"),
    reviewJob("a-mutate", a, body, "mutate"),
    closuresJob("a-validate-never", aNever, body),
    reviewJob("a1-validate", a1, body, "validate"),
    closuresJob("a1-validate-never", a1Never, body),
    reviewJob("b-validate", b, body, "validate"),
    reviewJob("b-mutate", b, body, "mutate"),
    diffPatchJob(pod),
  ];
  jobs.push(directPatchJob(pod, DIRECT_PATCH));
  const samples = new Map<string, number[]>(jobs.map((j) => [j.key, []]));
  for (let round = 0; round < opts.warmupRounds + opts.rounds; round++) {
    for (let j = 0; j < jobs.length; j++) {
      const job = jobs[(j + round) % jobs.length] as Job;
      const ns = job.run(opts.iterations) / opts.iterations;
      if (round >= opts.warmupRounds) samples.get(job.key)?.push(ns);
    }
  }
  closuresGate();
  const parse = samples.get("parse") ?? [];
  const ns: Record<string, number> = {};
  const ratio: Record<string, number> = {};
  const spread: Record<string, [number, number]> = {};
  for (const [key, xs] of samples) {
    ns[key] = median(xs);
    ratio[key] = medianRatio(xs, parse);
    spread[key] = [Math.min(...xs), Math.max(...xs)];
  }
  const direct = samples.get("patch-direct");
  return {
    options: opts,
    bodyBytes: Buffer.byteLength(body),
    policies: { a: a.set.policies.length, b: b.set.policies.length },
    ns,
    ratio,
    spread,
    patchRatio: direct ? medianRatio(direct, samples.get("patch-diff") ?? []) : undefined,
  };
}

const LABELS: Readonly<Record<string, string>> = {
  parse: "JSON.parse(body) (baseline)",
  "review-parse": "the webhook's parse: depth check, number pre-scan, JSON.parse",
  "js-rules": "floor: decode + the 20 rules as hand-written JS",
  "a-validate": "(a) 20 rules: decode + validate",
  "a-mutate": "(a) 20 rules: decode + mutate (no MAP)",
  "a-validate-never": "(a) 20 rules on closures only (CODEGEN=never): decode + validate",
  "a1-validate": "(a1) the 20 rules as one expression: decode + validate",
  "a1-validate-never": "(a1) one expression on closures only (CODEGEN=never)",
  "b-validate": "(b) pod-security + common: decode + validate",
  "b-mutate": "(b) pod-security + common: decode + mutate",
  "patch-diff": "patch: structuredClone + compare (fast-json-patch)",
  "patch-direct": "patch: celgate direct",
};

export function formatRequestReport(r: RequestBenchReport): string {
  const o = r.options;
  const rows = Object.keys(r.ns).map((k) => {
    const [lo, hi] = r.spread[k] ?? [0, 0];
    return [
      LABELS[k] ?? k,
      fmtUs(r.ns[k] ?? 0),
      `${fmtUs(lo)}..${fmtUs(hi)}`,
      fmtX(r.ratio[k] ?? Number.NaN),
    ];
  });
  return [
    `In-process request cost: review body ${r.bodyBytes} B; set (a) ${r.policies.a} policy, set (b) ${r.policies.b} policies;` +
      ` ${o.iterations} requests per job, medians of ${o.rounds} rounds after ${o.warmupRounds} warm-up`,
    "",
    table(["job", "per request (median)", "rounds min..max", "x JSON.parse"], rows),
  ].join("\n");
}

export function requestSummary(r: RequestBenchReport): SummaryRow[] {
  const parse = r.ns.parse ?? Number.NaN;
  const row = (key: string, figure: string): SummaryRow => {
    const ratio = r.ratio[key] ?? Number.NaN;
    return {
      target: "3",
      figure,
      value: fmtUs(r.ns[key] ?? Number.NaN),
      baseline: `${fmtUs(parse)} JSON.parse`,
      ratio,
      goal: "≤ 0.25×",
      met: ratio <= 0.25,
    };
  };
  const diff = r.ns["patch-diff"] ?? Number.NaN;
  return [
    { ...row("js-rules", "floor: decode + 20 rules in hand-written JS"), met: undefined, goal: "reference" },
    row("a-validate", "request, 20 rules (1 VAP): decode+validate"),
    row("a-validate-never", "request, 20 rules, closures only (CODEGEN=never)"),
    { ...row("a1-validate", "request, the 20 rules as one expression"), met: undefined, goal: "reference" },
    {
      ...row("a1-validate-never", "request, the one expression, closures only"),
      met: undefined,
      goal: "reference",
    },
    // Target 3 names the 20 rules. The Pod Security set runs about 90 expressions a review (40
    // variables, 19 validations, messages built per container): a reference against the same goal.
    { ...row("b-validate", "request, pod-security set: decode+validate"), met: undefined, goal: "reference" },
    { ...row("b-mutate", "request, pod-security set: decode+mutate"), met: undefined, goal: "reference" },
    {
      target: "6",
      figure: "patch built directly vs clone+compare",
      value: r.patchRatio === undefined ? "pending" : fmtUs(r.ns["patch-direct"] ?? Number.NaN),
      baseline: `${fmtUs(diff)} clone+compare`,
      ratio: r.patchRatio,
      goal: "≤ 0.05×",
      met: r.patchRatio === undefined ? undefined : r.patchRatio <= 0.05,
    },
  ];
}

export async function requestPart(argv: readonly string[]): Promise<PartReport> {
  return runPart(
    "request",
    () =>
      runRequestBench({
        rounds: intOption(argv, "rounds", DEFAULT_REQUEST_BENCH.rounds),
        iterations: intOption(argv, "iterations", DEFAULT_REQUEST_BENCH.iterations),
      }),
    formatRequestReport,
    requestSummary,
  );
}

if (isMain(import.meta.url)) await runPartAlone(requestPart);
