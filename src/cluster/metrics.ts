/**
 * Prometheus metrics of the cluster connection, on the registry the webhook's metrics use. The
 * `resource` label is a cached resource's name (`namespaces`, `configmaps`, `widgets.example.com`):
 * bounded by the paramKinds the loaded policies use.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { CacheObserver, SarObserver } from "./observe.ts";
import type { RegistrationObserver } from "./registration.ts";
import type { CacheStatus } from "./state.ts";

export interface ClusterMetrics {
  readonly caches: CacheObserver;
  readonly sar: SarObserver;
  /** Where the age gauge reads from at scrape time. */
  watch(status: () => readonly CacheStatus[]): void;
}

const SAR_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export function createClusterMetrics(registry: Registry): ClusterMetrics {
  const registers = [registry];
  let status: () => readonly CacheStatus[] = () => [];
  const synced = new Gauge({
    name: "celgate_cluster_cache_synced",
    help: "1 once the cache of a resource has completed its first list (readiness waits for every cache).",
    labelNames: ["resource"],
    registers,
  });
  const objects = new Gauge({
    name: "celgate_cluster_cache_objects",
    help: "Objects in the cache of a resource.",
    labelNames: ["resource"],
    registers,
  });
  const age = new Gauge({
    name: "celgate_cluster_cache_age_seconds",
    help: "How old the cached state of a resource may be: 0 while its watch is open and brings events or bookmarks, else the time since the cache was last known current; absent before the first list.",
    labelNames: ["resource"],
    registers,
    collect() {
      age.reset();
      for (const s of status()) if (s.ageSeconds !== null) age.set({ resource: s.resource }, s.ageSeconds);
    },
  });
  const relists = new Counter({
    name: "celgate_cluster_relists_total",
    help: "Full lists of a resource, by reason: initial, expired (410 Gone), error.",
    labelNames: ["resource", "reason"],
    registers,
  });
  const restarts = new Counter({
    name: "celgate_cluster_watch_restarts_total",
    help: "Watches of a resource opened again, by why the last one ended: closed, expired (410 Gone), error, silent (no event or bookmark for too long: the API server may be hung).",
    labelNames: ["resource", "reason"],
    registers,
  });
  const checks = new Counter({
    name: "celgate_authorizer_checks_total",
    help: "authorizer checks that needed the cluster, by how they were answered: from the SubjectAccessReview cache (hit), by a SubjectAccessReview (miss), from an answer past its TTL while SubjectAccessReviews fail (stale), or with the last failure while its backoff runs (backoff).",
    labelNames: ["cache"],
    registers,
  });
  const calls = new Counter({
    name: "celgate_subjectaccessreviews_total",
    help: "SubjectAccessReviews, by outcome: ok, error, budget (not sent: the review's budget was spent).",
    labelNames: ["outcome"],
    registers,
  });
  const latency = new Histogram({
    name: "celgate_subjectaccessreview_duration_seconds",
    help: "Time to answer one SubjectAccessReview.",
    buckets: SAR_BUCKETS,
    registers,
  });
  return {
    caches: {
      synced: (resource, s) => synced.set({ resource }, s ? 1 : 0),
      relisted: (resource, reason) => relists.inc({ resource, reason }),
      watchRestarted: (resource, reason) => restarts.inc({ resource, reason }),
      objects: (resource, count) => objects.set({ resource }, count),
      removed: (resource) => {
        synced.remove({ resource });
        objects.remove({ resource });
      },
    },
    sar: {
      check: (how) => checks.inc({ cache: how }),
      call: (outcome, seconds) => {
        calls.inc({ outcome });
        if (outcome !== "budget") latency.observe(seconds);
      },
    },
    watch(s) {
      status = s;
    },
  };
}

/** `serve --register-webhooks`: each write of a webhook configuration, by kind and what it did. */
export function createRegistrationMetrics(registry: Registry): RegistrationObserver {
  const writes = new Counter({
    name: "celgate_webhook_registrations_total",
    help: "Passes over serve's own webhook configurations (--register-webhooks), by kind and action: created, updated, unchanged, failed (retried).",
    labelNames: ["kind", "action"],
    registers: [registry],
  });
  return { registered: (kind, action) => writes.inc({ kind, action }) };
}
