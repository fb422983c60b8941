/**
 * Prometheus metrics for the webhook. Everything lives on a registry the caller passes in (never
 * prom-client's global one), so tests get a fresh registry each and a process can run two servers.
 * Labels stay bounded: route templates, operations, outcomes and policy/binding names (bounded by
 * what is loaded) — never a resource name, namespace or raw URL.
 */
import { collectDefaultMetrics, Counter, Gauge, type Registry } from "prom-client";
import type { AdmissionDecision, PolicyResult } from "../../engine/types.ts";
import { CountedDurations } from "./review-stats.ts";

import type { ReviewOutcome } from "./review.ts";

export { outcomeOf, type ReviewOutcome } from "./review.ts";

/**
 * How a policy reload ended: the new set serves (`success`); it serves, but some files could not be
 * read or parsed and keep their last good content (`partial`); its files do not parse or the reload
 * failed (`failure`); or it would remove policies the serving set holds and waits for the files to
 * settle (`held_back`). In the last two the previous set keeps serving.
 */
export type ReloadResult = "success" | "partial" | "failure" | "held_back";

export interface PoliciesLoaded {
  readonly kind: "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy";
  /** Whether the policy takes effect (has a binding) rather than being loaded but inert. */
  readonly enforced: boolean;
  readonly count: number;
}

/**
 * Work refused to stay within the server's limits: a connection refused at the connection cap, an
 * idle connection closed to make room for a new one, a request answered 429 because too many bytes
 * of requests were in flight.
 */
export type ShedReason = "connection_refused" | "connection_evicted" | "bytes_in_flight";

export interface WebhookMetrics {
  readonly registry: Registry;
  /**
   * One finished review. `operation` is the request's operation or `unknown` when the body could
   * not be decoded; `decision` is absent when there is none (bad request, engine failure).
   */
  recordReview(
    path: string,
    operation: string,
    outcome: ReviewOutcome,
    seconds: number,
    decision?: AdmissionDecision,
  ): void;
  recordPolicyResults(results: readonly PolicyResult[]): void;
  /**
   * A policy (re)load attempt; the compile-error gauge and loaded counts are set separately. A
   * held-back reload is counted as suspect, not as a success or a failure, and the last-success
   * gauge reads 0 until a set is applied.
   */
  recordReload(result: ReloadResult, at?: Date): void;
  /** A policy set refused because its estimated memory is over its share of the heap (PE_SET_MEMORY). */
  recordSetTooLarge(): void;
  /** The estimate a policy set may reach in this process's heap (sources/memory-budget.ts). */
  setMemoryBudget(bytes: number): void;
  setCompileErrors(count: number): void;
  setPoliciesLoaded(entries: readonly PoliciesLoaded[]): void;
  setCertificateExpiry(notAfter: Date): void;
  /** A TLS handshake that failed, by a reason from a fixed set (handshake-log.ts). */
  recordHandshakeFailure(reason: string): void;
  recordShed(reason: ShedReason): void;
  /** Where `celgate_connections_open` is read from when scraped. */
  observeConnections(open: () => number): void;
  /** A review handed to the slow lane: cut at its time slice, or a body too large to parse here. */
  recordOffload(reason: "slice" | "large_body"): void;
}

/** Admission timeouts are at most 30 s; buckets resolve the sub-millisecond CEL range too. */
const REVIEW_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const POLICY_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1];

/**
 * Registers every celgate metric and Node's default process metrics on `registry`. Long because it
 * is a table: one declaration per metric, with its help text, in the order /metrics lists them.
 */
export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const registers = [registry];
  const reviews = new CountedDurations(
    registry,
    REVIEW_BUCKETS,
    {
      name: "celgate_admission_requests_total",
      help: "Admission reviews answered, by webhook path, operation and outcome.",
      labels: ["path", "operation", "outcome"],
    },
    {
      name: "celgate_admission_review_duration_seconds",
      help: "Time from receiving an admission review to sending its answer.",
      labels: ["path", "operation"],
    },
  );
  const policies = new CountedDurations(
    registry,
    POLICY_BUCKETS,
    {
      name: "celgate_policy_evaluations_total",
      help: "Policy evaluations, by policy, binding and outcome (pass, fail, skip, error).",
      labels: ["policy", "binding", "outcome"],
    },
    {
      name: "celgate_policy_evaluation_duration_seconds",
      help: "Time spent evaluating one policy for one request.",
      labels: ["policy"],
    },
  );
  const compileErrors = new Gauge({
    name: "celgate_policy_compile_errors",
    help: "Compile errors in the policies of the last load.",
    registers,
  });
  const reloads = new Counter({
    name: "celgate_policy_reloads_total",
    help: "Policy reloads applied (success), applied with some files kept at their last good content because they could not be read or parsed (partial), or rejected or failed (failure).",
    labelNames: ["result"] as const,
    registers,
  });
  const suspectReloads = new Counter({
    name: "celgate_policy_reload_suspect_total",
    help: "Policy reloads held back because they would remove policies, bindings or params the serving set holds; applied only once the files read the same twice, some time apart.",
    registers,
  });
  const setsTooLarge = new Counter({
    name: "celgate_policy_sets_refused_memory_total",
    help: "Policy sets refused because their estimated memory is over what the heap leaves a set (PE_SET_MEMORY); the last good set keeps serving.",
    registers,
  });
  const memoryBudget = new Gauge({
    name: "celgate_policy_set_memory_budget_bytes",
    help: "The estimated memory a policy set may reach in this process's heap: half of V8's heap limit less what the server needs besides its sets.",
    registers,
  });
  const lastReload = new Gauge({
    name: "celgate_policy_last_reload_timestamp_seconds",
    help: "When policies were last reloaded (successfully or not), in seconds since the epoch.",
    registers,
  });
  const lastReloadSuccess = new Gauge({
    name: "celgate_policy_last_reload_success",
    help: "1 if the last policy reload was applied whole, 0 if it was partial, rejected, failed or held back.",
    registers,
  });
  const loaded = new Gauge({
    name: "celgate_policies_loaded",
    help: "Policies loaded, by kind and whether a binding enforces them.",
    labelNames: ["kind", "enforced"] as const,
    registers,
  });
  const certificateExpiry = new Gauge({
    name: "celgate_certificate_expiry_timestamp_seconds",
    help: "When the serving certificate expires, in seconds since the epoch.",
    registers,
  });
  const handshakeFailures = new Counter({
    name: "celgate_tls_handshake_failures_total",
    help: "TLS handshakes that failed, by reason (no_client_certificate, untrusted_client_certificate, protocol, timeout, reset, other).",
    labelNames: ["reason"] as const,
    registers,
  });
  const shed = new Counter({
    name: "celgate_load_shed_total",
    help: "Work refused to stay within the server's limits: connections refused at the cap (connection_refused), idle connections closed to make room (connection_evicted), requests answered 429 (bytes_in_flight).",
    labelNames: ["reason"] as const,
    registers,
  });
  const offloaded = new Counter({
    name: "celgate_slow_lane_reviews_total",
    help: "Reviews answered by the slow lane's worker thread, by why they went there: still running when their time slice on the main thread ended (slice), or a body too large to parse there (large_body).",
    labelNames: ["reason"] as const,
    registers,
  });
  let openConnections = (): number => 0;
  new Gauge({
    name: "celgate_connections_open",
    help: "Connections open on the admission port, TLS handshakes included.",
    registers,
    collect() {
      this.set(openConnections());
    },
  });
  collectDefaultMetrics({ register: registry });

  return {
    registry,
    recordReview(path, operation, outcome, seconds, decision) {
      reviews.record(path, operation, outcome, seconds);
      // Guarded because the decision comes from the engine and a metric must never fail a review.
      if (decision !== undefined && Array.isArray(decision.results))
        this.recordPolicyResults(decision.results);
    },
    recordPolicyResults(results) {
      for (const r of results) policies.record(r.policy, r.binding ?? "", r.outcome, r.durationMs / 1000);
    },
    recordReload(result, at = new Date()) {
      if (result === "held_back") suspectReloads.inc();
      else reloads.inc({ result });
      lastReload.set(at.getTime() / 1000);
      lastReloadSuccess.set(result === "success" ? 1 : 0);
    },
    recordSetTooLarge() {
      setsTooLarge.inc();
    },
    setMemoryBudget(bytes) {
      memoryBudget.set(bytes);
    },
    setCompileErrors(count) {
      compileErrors.set(count);
    },
    setPoliciesLoaded(entries) {
      // Reset first so a kind that disappears reads 0 rather than its last count.
      loaded.reset();
      for (const kind of ["ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"] as const)
        for (const enforced of ["true", "false"] as const) loaded.set({ kind, enforced }, 0);
      for (const e of entries) loaded.inc({ kind: e.kind, enforced: String(e.enforced) }, e.count);
    },
    setCertificateExpiry(notAfter) {
      certificateExpiry.set(notAfter.getTime() / 1000);
    },
    recordHandshakeFailure(reason) {
      handshakeFailures.inc({ reason });
    },
    recordShed(reason) {
      shed.inc({ reason });
    },
    observeConnections(open) {
      openConnections = open;
    },
    recordOffload(reason) {
      offloaded.inc({ reason });
    },
  };
}
