/**
 * `serve`'s connection to the cluster, put together: the caches (Namespaces, paramKinds, and with
 * `--policies-from-cluster` the policy objects), the SubjectAccessReview authorizer, their metrics
 * and log lines, and readiness. For each policy set it loads, the server asks it for the set to
 * serve and the engine context over the caches; with the reviewer, the webhook builds its admitter
 * (adapters/server/cluster-admitter.ts).
 */
import type { Registry } from "prom-client";
import type { CompiledPolicySet, CompileOptions } from "../compile/policy.ts";
import { contextFromSet, type EngineContext } from "../engine/context.ts";
import { formatDiagnostic } from "../errors.ts";
import { err, ok, type Result } from "../result.ts";
import { type ApiClient, type ConnectOptions, connect, inCluster } from "./client.ts";
import { createClusterMetrics } from "./metrics.ts";
import type { ClusterLog } from "./observe.ts";
import { ClusterPolicies, combineWithCluster } from "./policies.ts";
import { DEFAULT_SILENCE_MS, type ReflectorOptions } from "./reflector.ts";
import { type SarOptions, SubjectAccessReviewer } from "./sar.ts";
import { type CacheStatus, ClusterState, paramKindsOf } from "./state.ts";

export interface ClusterLinkOptions extends ConnectOptions {
  /** Also serve the cluster's ValidatingAdmissionPolicy/MutatingAdmissionPolicy objects. */
  readonly policiesFromCluster?: boolean;
  readonly compile?: CompileOptions;
  readonly log: ClusterLog;
  readonly registry: Registry;
  readonly sar?: Omit<SarOptions, "observer">;
  readonly reflector?: Omit<ReflectorOptions, "log" | "observer" | "onChange">;
  /**
   * Whether a pod whose cluster state has gone stale (a cache older than the reflector's `silenceMs`,
   * 75 s by default) stays ready and decides from it (`serve`, the default: as the API server's own
   * admission plugin decides from its informers' caches) or reports not ready (`unready`).
   */
  readonly staleReadiness?: StaleReadiness;
  /** How often to log the cached state's age while the API server cannot be reached; default 30 s. */
  readonly staleLogMs?: number;
  /** The cluster's policy objects changed: the server should ask for a new admitter. */
  readonly onPoliciesChanged?: () => void;
}

export const STALE_READINESS = ["serve", "unready"] as const;
export type StaleReadiness = (typeof STALE_READINESS)[number];

/** What to serve for one policy set from the files. */
export interface ClusterServing {
  /** The files' set, plus the cluster's own policies when asked for (files win a name clash). */
  readonly set: CompiledPolicySet;
  /** Namespaces and params from the cluster's caches (the files' objects where the caches have none). */
  readonly context: EngineContext;
  /**
   * With `--policies-from-cluster`, the cluster's policy objects `set` was combined with, as the
   * parser reads them: the slow lane's worker combines the same (parseClusterObjects).
   */
  readonly clusterPolicies?: readonly Readonly<Record<string, unknown>>[];
}

export interface ClusterLink {
  readonly server: string;
  /** The connection itself, for what else serve writes to the cluster (its webhook configurations). */
  readonly client: ApiClient;
  /** Answers `authorizer` checks with SubjectAccessReviews. */
  readonly reviewer: SubjectAccessReviewer;
  /**
   * The set and context for a policy set from the files; the caches start following the set's
   * paramKinds (and stop following the ones no longer bound).
   */
  serving(files: CompiledPolicySet): ClusterServing;
  /** True once every cache has completed its first list. */
  ready(): boolean;
  /** true when the pod may take traffic as far as the cluster goes, else why not (`staleReadiness`). */
  readiness(): true | string;
  whenReady(timeoutMs: number): Promise<boolean>;
  status(): CacheStatus[];
  stop(): void;
}

/**
 * Connects when there is a cluster to connect to: `kubeconfig` given, or running in a pod. Without
 * either the result is ok(undefined): `serve` runs from its files as before. A kubeconfig that
 * cannot be used is an error.
 */
export async function openClusterLink(
  options: ClusterLinkOptions,
): Promise<Result<ClusterLink | undefined, string>> {
  if (options.kubeconfig === undefined && !inCluster(options)) return ok(undefined);
  const connected = await connect(options);
  if (!connected.ok) return err(connected.error);
  return ok(createLink(connected.value, options));
}

/**
 * The link over a connected client: caches, SubjectAccessReviewer, readiness and metrics, wired to
 * each other. One function a little over the usual length: the returned object's methods close over
 * those parts, which is what keeps them private.
 */
export function createLink(client: ApiClient, options: ClusterLinkOptions): ClusterLink {
  const metrics = createClusterMetrics(options.registry);
  const log = options.log;
  const state = new ClusterState(client, {
    log,
    observer: metrics.caches,
    ...(options.reflector ? { reflector: options.reflector } : {}),
  });
  const reviewer = new SubjectAccessReviewer(client, { ...options.sar, observer: metrics.sar });
  let timer: NodeJS.Timeout | undefined;
  let policies: ClusterPolicies | undefined;
  if (options.policiesFromCluster) {
    policies = new ClusterPolicies(client, {
      log,
      observer: metrics.caches,
      ...(options.reflector ? { reflector: options.reflector } : {}),
      onChange: () => {
        // A relist changes many objects at once: one new admitter for the lot.
        clearTimeout(timer);
        timer = setTimeout(() => options.onPoliciesChanged?.(), 50);
        timer.unref();
      },
    });
    void policies.start();
  }
  const status = (): CacheStatus[] => [
    ...state.status(),
    ...(policies?.caches ?? []).map((r) => ({
      resource: r.name,
      synced: r.synced,
      objects: r.size,
      ageSeconds: r.ageSeconds() ?? null,
    })),
  ];
  metrics.watch(status);
  let lastReported = "";
  const stale = setInterval(() => {
    // Under a second is the gap between a list and its watch, not a lost connection.
    const old = status().filter((s) => s.ageSeconds !== null && s.ageSeconds >= 1);
    if (old.length === 0) return;
    log.warn(
      {
        server: client.server,
        caches: old.map((s) => ({ resource: s.resource, ageSeconds: Math.round(s.ageSeconds ?? 0) })),
      },
      "the API server cannot be reached: serving from the last synced cluster state",
    );
  }, options.staleLogMs ?? 30_000);
  stale.unref();
  const ready = () => state.ready() && (policies?.ready() ?? true);
  const staleSeconds = (options.reflector?.silenceMs ?? DEFAULT_SILENCE_MS) / 1000;
  const readiness = (): true | string => {
    if (!ready()) return "the cluster caches have not synced yet";
    if (options.staleReadiness !== "unready") return true;
    const old = status().filter((s) => s.ageSeconds !== null && s.ageSeconds >= staleSeconds);
    if (old.length === 0) return true;
    const worst = Math.max(...old.map((s) => s.ageSeconds ?? 0));
    return `cluster state ${Math.round(worst)} s old (${old.map((s) => s.resource).join(", ")}), older than ${staleSeconds} s; --cluster-stale-readiness=unready`;
  };
  return {
    server: client.server,
    client,
    reviewer,
    serving(files) {
      let set = files;
      let clusterPolicies: Record<string, unknown>[] | undefined;
      if (policies) {
        clusterPolicies = policies.objects();
        const combined = combineWithCluster(files, policies.parsed(), options.compile);
        set = combined.set;
        const report = combined.diagnostics.map((d) => formatDiagnostic(d)).join("\n");
        if (report !== lastReported && report !== "")
          log.warn(
            { diagnostics: combined.diagnostics.map((d) => formatDiagnostic(d)) },
            "cluster policy objects",
          );
        lastReported = report;
      }
      state.follow(paramKindsOf(set));
      return {
        set,
        context: state.context(contextFromSet(set)),
        ...(clusterPolicies ? { clusterPolicies } : {}),
      };
    },
    ready,
    readiness,
    whenReady: async (timeoutMs) => {
      const end = performance.now() + timeoutMs;
      if (!(await state.whenReady(timeoutMs))) return false;
      while (!ready()) {
        if (performance.now() > end) return false;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return true;
    },
    status,
    stop() {
      clearInterval(stale);
      clearTimeout(timer);
      state.stop();
      policies?.stop();
    },
  };
}
