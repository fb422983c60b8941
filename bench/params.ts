/**
 * Param lookups against the size of the cache (issue 36 item 5 bullet 3): a cluster-connected
 * server's lookups of a binding's params, as the engine makes them for each review (subjects.ts:
 * collectParams, and describeParamMiss when none is found), over a ConfigMap cache of 1,100, 20,000
 * and 60,000 objects (one `limits` per namespace), filled from the test API server by the same
 * reflector `serve` runs (cluster/state.ts). Three lookups: by name in the request's namespace
 * (found), by a name that is nowhere (none found, and the words for what was nearly found), and by
 * label selector in the request's namespace. The goal: flat in the size of the cache.
 *
 * Gate, before timing: each lookup finds what a walk over the objects would.
 *
 *   node dist-bench/bench/params.js [--rounds 5] [--iterations 2000]
 */
import { connect } from "../src/cluster/client.ts";
import { ClusterState } from "../src/cluster/state.ts";
import { contextFromResources } from "../src/engine/context.ts";
import { collectParams, describeParamMiss, type ParamLookup } from "../src/engine/params.ts";
import type { ParamRef } from "../src/policy/types.ts";
import { KubeApiServer } from "../test/helpers/kube-apiserver.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  fmtUs,
  GateError,
  intOption,
  isMain,
  median,
  nowNs,
  type PartReport,
  runPart,
  runPartAlone,
  type SummaryRow,
  table,
} from "./common.ts";

const SIZES = [1100, 20_000, 60_000] as const;
const CM = { apiVersion: "v1", kind: "ConfigMap" };
const TEAMS = 50;

const LOOKUPS: readonly { readonly name: string; readonly ref: ParamRef }[] = [
  { name: "by name, found", ref: { name: "limits", parameterNotFoundAction: "Deny" } },
  { name: "by name, none found (described)", ref: { name: "missing", parameterNotFoundAction: "Allow" } },
  {
    name: "by selector in the namespace",
    ref: {
      selector: { matchLabels: { team: "t7" }, matchExpressions: [] },
      parameterNotFoundAction: "Allow",
    },
  },
];

/** One lookup as the engine makes it for a review in `namespace`: collect, and word a miss. */
function lookup(params: ParamLookup, ref: ParamRef, namespace: string): number {
  const found = collectParams(params, CM, ref, namespace);
  if (found.ok && found.value.length > 0) return found.value.length;
  return describeParamMiss(params, CM, ref, namespace).length;
}

interface SizeResult {
  readonly size: number;
  /** Median nanoseconds per lookup, by LOOKUPS' index. */
  readonly ns: readonly number[];
}

async function measure(size: number, rounds: number, iterations: number): Promise<SizeResult> {
  const api = new KubeApiServer();
  await api.start();
  const dir = mkdtempSync(join(tmpdir(), "celgate-bench-params-"));
  const state = await (async () => {
    api.putMany(
      Array.from({ length: size }, (_, i) => ({
        ...CM,
        metadata: { name: "limits", namespace: `ns-${i}`, labels: { team: `t${i % TEAMS}` } },
        data: { max: String(i) },
      })),
    );
    writeFileSync(join(dir, "kubeconfig"), api.kubeconfig());
    const client = await connect({ kubeconfig: join(dir, "kubeconfig") });
    if (!client.ok) throw new Error(client.error);
    const s = new ClusterState(client.value);
    s.follow([CM]);
    if (!(await s.whenReady(300_000))) throw new Error(`the ${size} ConfigMaps did not list`);
    return s;
  })();
  try {
    const params = state.context(contextFromResources([])).params;
    // The gate: each lookup's result, in namespaces spread over the cache.
    for (let i = 0; i < size; i += Math.ceil(size / 50)) {
      const hit = collectParams(params, CM, (LOOKUPS[0] as { ref: ParamRef }).ref, `ns-${i}`);
      const data = hit.ok ? (hit.value[0]?.object as { data?: { max?: string } } | undefined) : undefined;
      if (data?.data?.max !== String(i)) throw new GateError(`ns-${i}: found ${JSON.stringify(data)}`);
      const bySelector = collectParams(params, CM, (LOOKUPS[2] as { ref: ParamRef }).ref, `ns-${i}`);
      const want = i % TEAMS === 7 ? 1 : 0;
      if (!bySelector.ok || bySelector.value.length !== want)
        throw new GateError(
          `ns-${i}: the selector found ${bySelector.ok ? bySelector.value.length : "an error"}`,
        );
    }
    const ns = LOOKUPS.map((l) => {
      const samples: number[] = [];
      let sink = 0;
      // A round untimed first: the first size measured would otherwise carry the JIT's warm-up.
      for (let i = 0; i < iterations; i++) sink += lookup(params, l.ref, `ns-${(i * 7919) % size}`);
      for (let r = 0; r < rounds; r++) {
        const start = nowNs();
        for (let i = 0; i < iterations; i++) sink += lookup(params, l.ref, `ns-${(i * 7919) % size}`);
        samples.push(Number(nowNs() - start) / iterations);
        if (sink < 0) throw new Error("unreachable");
      }
      return median(samples);
    });
    return { size, ns };
  } finally {
    state.stop();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ParamsReport {
  readonly results: readonly SizeResult[];
}

async function runParamsBench(rounds: number, iterations: number): Promise<ParamsReport> {
  const results: SizeResult[] = [];
  for (const size of SIZES) results.push(await measure(size, rounds, iterations));
  return { results };
}

function formatParamsReport(r: ParamsReport): string {
  return [
    "== Param lookups of a connected server, by the size of the ConfigMap cache (per lookup, median) ==",
    table(
      ["lookup", ...r.results.map((x) => `${x.size.toLocaleString("en-US")} cached`)],
      LOOKUPS.map((l, i) => [l.name, ...r.results.map((x) => fmtUs(x.ns[i] ?? Number.NaN))]),
      1,
    ),
  ].join("\n");
}

function paramsSummary(r: ParamsReport): SummaryRow[] {
  const small = r.results[0];
  const large = r.results[r.results.length - 1];
  if (small === undefined || large === undefined) return [];
  return LOOKUPS.map((l, i) => {
    const ratio = (large.ns[i] ?? Number.NaN) / (small.ns[i] ?? Number.NaN);
    return {
      target: "36.5",
      figure: `param lookup ${l.name}, ${large.size.toLocaleString("en-US")} cached`,
      value: fmtUs(large.ns[i] ?? Number.NaN),
      baseline: `${fmtUs(small.ns[i] ?? Number.NaN)} with ${small.size.toLocaleString("en-US")}`,
      ratio,
      goal: "flat (≤ 2×)",
      met: ratio <= 2,
    };
  });
}

export async function paramsPart(argv: readonly string[]): Promise<PartReport> {
  return runPart(
    "params",
    () => runParamsBench(intOption(argv, "rounds", 5), intOption(argv, "iterations", 2000)),
    formatParamsReport,
    paramsSummary,
  );
}

if (isMain(import.meta.url)) await runPartAlone(paramsPart);
