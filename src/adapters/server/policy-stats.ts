/**
 * Per-policy metrics without per-policy work on the request path. A labelled prom-client update
 * hashes its labels on every call (about a microsecond); with twenty policies per review that was a
 * good part of a review's CPU. Here a review adds to plain counters found by two Map lookups, and
 * the Prometheus samples are built from them only when /metrics is scraped. The registry sees two
 * ordinary metrics with the names, labels and types they always had:
 * `celgate_policy_evaluations_total` (counter) and `celgate_policy_evaluation_duration_seconds`
 * (histogram).
 */
import type { Metric, Registry } from "prom-client";
import type { PolicyResult } from "../../engine/types.ts";

interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName?: string;
}

interface MetricData {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly values: Sample[];
  readonly aggregator: "sum";
}

/** The part of prom-client's metric interface a Registry uses to render and reset a metric. */
interface CustomMetric {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly aggregator: "sum";
  get(): Promise<MetricData>;
  reset(): void;
}

interface PolicyEntry {
  /** Count per bucket (the last one is +Inf), not yet cumulative. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
  /** binding → outcome → evaluations. */
  readonly outcomes: Map<string, Map<string, number>>;
}

export class PolicyStats {
  private readonly policies = new Map<string, PolicyEntry>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    const counter: CustomMetric = {
      name: "celgate_policy_evaluations_total",
      help: "Policy evaluations, by policy, binding and outcome (pass, fail, skip, error).",
      type: "counter",
      aggregator: "sum",
      get: async () => ({ ...this.meta(counter), values: this.evaluationSamples() }),
      reset: () => this.policies.clear(),
    };
    const histogram: CustomMetric = {
      name: "celgate_policy_evaluation_duration_seconds",
      help: "Time spent evaluating one policy for one request.",
      type: "histogram",
      aggregator: "sum",
      get: async () => ({ ...this.meta(histogram), values: this.durationSamples(histogram.name) }),
      reset: () => this.policies.clear(),
    };
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }

  private meta(m: CustomMetric): Omit<MetricData, "values"> {
    return { name: m.name, help: m.help, type: m.type, aggregator: m.aggregator };
  }

  /** The request path: a few Map lookups and additions per result. */
  record(results: readonly PolicyResult[]): void {
    for (const r of results) {
      let p = this.policies.get(r.policy);
      if (!p) {
        p = { buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0, outcomes: new Map() };
        this.policies.set(r.policy, p);
      }
      const binding = r.binding ?? "";
      let outcomes = p.outcomes.get(binding);
      if (!outcomes) {
        outcomes = new Map();
        p.outcomes.set(binding, outcomes);
      }
      outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
      const seconds = r.durationMs / 1000;
      if (Number.isFinite(seconds) && seconds >= 0) {
        let i = 0;
        while (i < this.bounds.length && seconds > (this.bounds[i] as number)) i++;
        (p.buckets as Float64Array)[i] = ((p.buckets as Float64Array)[i] as number) + 1;
        p.sum += seconds;
        p.count++;
      }
    }
  }

  private evaluationSamples(): Sample[] {
    const out: Sample[] = [];
    for (const [policy, p] of this.policies)
      for (const [binding, outcomes] of p.outcomes)
        for (const [outcome, value] of outcomes) out.push({ labels: { policy, binding, outcome }, value });
    return out;
  }

  private durationSamples(name: string): Sample[] {
    const out: Sample[] = [];
    for (const [policy, p] of this.policies) {
      if (p.count === 0) continue;
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += p.buckets[i] as number;
        out.push({ labels: { le, policy }, value: cumulative, metricName: `${name}_bucket` });
      });
      out.push({ labels: { le: "+Inf", policy }, value: p.count, metricName: `${name}_bucket` });
      out.push({ labels: { policy }, value: p.sum, metricName: `${name}_sum` });
      out.push({ labels: { policy }, value: p.count, metricName: `${name}_count` });
    }
    return out;
  }
}
