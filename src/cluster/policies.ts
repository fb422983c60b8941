/**
 * `serve --policies-from-cluster`: the cluster's own ValidatingAdmissionPolicy,
 * MutatingAdmissionPolicy and binding objects, cached like any other resource and served next to
 * the policy files. For each kind the newest version the cluster serves is watched (v1, then
 * v1beta1, then v1alpha1): every served version shows the same objects, and a cluster that has
 * MutatingAdmissionPolicy only in an alpha or beta version (the feature off, or an older release)
 * still has its objects served by celgate.
 *
 * Each object goes through the same parser as a file (as JSON, which is YAML), so it gets the same
 * defaults, checks and diagnostics, located at `cluster:<kind>/<name>`. A policy or binding with the
 * name of one in the files is a clash: the file's is used and the clash is reported.
 */
import { type CompiledPolicySet, type CompileOptions, compilePolicySet } from "../compile/policy.ts";
import type { Diagnostic } from "../errors.ts";
import { checkReferences, mergePolicySets, parsePolicyText } from "../policy/parse.ts";
import type { PolicySet } from "../policy/types.ts";
import type { ApiClient } from "./client.ts";
import { Discovery } from "./discovery.ts";
import { type CacheObserver, type ClusterLog, NO_CACHE_OBSERVER, QUIET_LOG } from "./observe.ts";
import { type KubeObject, Reflector, type ReflectorOptions } from "./reflector.ts";
import { stringifyJson } from "../request/json-deep.ts";

const GROUP = "admissionregistration.k8s.io";
const VERSIONS = ["v1", "v1beta1", "v1alpha1"] as const;
export const POLICY_KINDS = [
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "MutatingAdmissionPolicy",
  "MutatingAdmissionPolicyBinding",
] as const;

export interface ClusterPoliciesOptions {
  readonly log?: ClusterLog;
  readonly observer?: CacheObserver;
  readonly reflector?: Omit<ReflectorOptions, "log" | "observer" | "onChange">;
  /** Called when a policy or binding object changes. */
  readonly onChange?: () => void;
}

interface Parsed {
  readonly set: PolicySet;
  readonly diagnostics: readonly Diagnostic[];
}

/** What the parser reads of a cluster object: server-set metadata and status are left out. */
function forParser(o: KubeObject): Record<string, unknown> {
  const md = (o.metadata ?? {}) as Record<string, unknown>;
  const metadata: Record<string, unknown> = { name: md.name };
  if (md.labels) metadata.labels = md.labels;
  if (md.annotations) metadata.annotations = md.annotations;
  return { apiVersion: o.apiVersion, kind: o.kind, metadata, spec: o.spec };
}

/** One object as the parser reads it (forParser's), parsed as a file named after it. */
function parseForParser(f: Readonly<Record<string, unknown>>): Parsed {
  const name = `cluster:${String(f.kind)}/${(f.metadata as { name?: string } | undefined)?.name ?? ""}`;
  // stringifyJson: a watched object may hold an int64 beyond 2^53 (a bigint), written as its digits.
  return parsePolicyText(stringifyJson(f, 1), name);
}

const parsedObjects = new WeakMap<KubeObject, Parsed>();
function parseObject(o: KubeObject): Parsed {
  let p = parsedObjects.get(o);
  if (!p) {
    p = parseForParser(forParser(o));
    parsedObjects.set(o, p);
  }
  return p;
}

/**
 * Objects as `ClusterPolicies.objects()` gives them, parsed as `parsed()` parses the cached ones:
 * the slow lane's worker builds the set the main thread serves from them.
 */
export function parseClusterObjects(objects: readonly Readonly<Record<string, unknown>>[]): Parsed {
  const parsed = objects.map(parseForParser);
  return {
    set: mergePolicySets(parsed.map((p) => p.set)),
    diagnostics: parsed.flatMap((p) => p.diagnostics),
  };
}

export class ClusterPolicies {
  private readonly reflectors: Reflector[] = [];
  /** Kinds resolved so far: a Reflector, or false for a kind the cluster serves in no version. */
  private readonly resolved = new Map<string, Reflector | false>();
  private stopped = false;
  private readonly log: ClusterLog;

  constructor(
    private readonly client: ApiClient,
    private readonly options: ClusterPoliciesOptions = {},
  ) {
    this.log = options.log ?? QUIET_LOG;
  }

  /** Finds each kind's newest served version and starts its cache. */
  async start(): Promise<void> {
    const discovery = new Discovery(this.client);
    for (const kind of POLICY_KINDS) {
      let found: Reflector | false = false;
      for (const version of VERSIONS) {
        let r = await discovery.resolve(`${GROUP}/${version}`, kind);
        // A failed discovery request (not an answer that the kind is missing) is asked again until
        // the API server answers: readiness waits for it meanwhile.
        for (let attempt = 0; !r.ok && !r.missing && !this.stopped; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 200 * 2 ** attempt)).unref());
          r = await discovery.resolve(`${GROUP}/${version}`, kind);
        }
        if (this.stopped) return;
        if (!r.ok) continue;
        found = new Reflector(this.client, r.resource, {
          ...this.options.reflector,
          log: this.log,
          observer: this.options.observer ?? NO_CACHE_OBSERVER,
          ...(this.options.onChange ? { onChange: this.options.onChange } : {}),
        });
        this.reflectors.push(found);
        found.start();
        this.log.info({ kind, apiVersion: `${GROUP}/${version}` }, "watching the cluster's policy objects");
        break;
      }
      if (found === false) this.log.warn({ kind }, "the cluster serves no version of this policy kind");
      this.resolved.set(kind, found);
    }
    this.options.onChange?.();
  }

  /** Every kind resolved, and each served one listed once. */
  ready(): boolean {
    if (this.resolved.size < POLICY_KINDS.length) return false;
    return this.reflectors.every((r) => r.synced);
  }

  get caches(): readonly Reflector[] {
    return this.reflectors;
  }

  /** The cluster's policy objects, parsed. */
  /** The cached objects as the parser reads them, in the order `parsed()` reads them. */
  objects(): Record<string, unknown>[] {
    return this.reflectors.flatMap((r) => [...r.all()].map(forParser));
  }

  parsed(): Parsed {
    const sets: PolicySet[] = [];
    const diagnostics: Diagnostic[] = [];
    for (const r of this.reflectors) {
      for (const o of r.all()) {
        const p = parseObject(o);
        sets.push(p.set);
        diagnostics.push(...p.diagnostics);
      }
    }
    return { set: mergePolicySets(sets), diagnostics };
  }

  stop(): void {
    this.stopped = true;
    for (const r of this.reflectors) r.stop();
  }
}

/** A compiled set back to what it was compiled from. */
function sourceOf(set: CompiledPolicySet): PolicySet {
  return {
    policies: set.policies.map((p) => p.policy),
    bindings: set.bindings.map((b) => b.binding),
    resources: set.resources,
  };
}

/**
 * The files' set and the cluster's objects as one compiled set. A cluster policy or binding whose
 * kind and name a file already defines is left out, with a warning.
 */
export function combineWithCluster(
  files: CompiledPolicySet,
  cluster: Parsed,
  options: CompileOptions = {},
): { readonly set: CompiledPolicySet; readonly diagnostics: readonly Diagnostic[] } {
  const base = sourceOf(files);
  const taken = new Set([...base.policies, ...base.bindings].map((x) => `${x.kind}/${x.name}`));
  const diagnostics: Diagnostic[] = [...cluster.diagnostics];
  const keep = <T extends { kind: string; name: string }>(xs: readonly T[]): T[] =>
    xs.filter((x) => {
      if (!taken.has(`${x.kind}/${x.name}`)) return true;
      diagnostics.push({
        code: "PE_DUPLICATE",
        severity: "warning",
        message: `${x.kind} '${x.name}' is defined in the policy files and in the cluster; the file's definition is used`,
        object: { kind: x.kind, name: x.name },
      });
      return false;
    });
  const merged: PolicySet = {
    policies: [...base.policies, ...keep(cluster.set.policies)],
    bindings: [...base.bindings, ...keep(cluster.set.bindings)],
    resources: base.resources,
  };
  diagnostics.push(...checkReferences(merged).filter((d) => d.code !== "PE_DUPLICATE"));
  const set = compilePolicySet(merged, options);
  return { set, diagnostics: [...diagnostics, ...set.diagnostics] };
}
