/**
 * The metrics a review updates, without prom-client work on the request path. A labelled
 * prom-client update hashes its labels on every call (a microsecond or more; a histogram observe
 * about three in a profile under load); with twenty policies per review that was a good part of a
 * review's CPU. Here a review adds to plain counters found by Map lookups, and the Prometheus
 * samples are built from them only when /metrics is scraped. The registry sees ordinary metrics
 * with the names, labels and types they always had: `celgate_admission_requests_total` and
 * `celgate_policy_evaluations_total` (counters), `celgate_admission_review_duration_seconds` and
 * `celgate_policy_evaluation_duration_seconds` (histograms).
 */
import type { Metric, Registry } from "prom-client";

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

/** A histogram's counts for one label set: per bucket (the last one is +Inf, not cumulative), sum, count. */
class Buckets {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) return;
    let i = 0;
    while (i < this.bounds.length && seconds > (this.bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += seconds;
    this.count++;
  }

  /** The Prometheus samples, `le` last as prom-client's own histograms put it. */
  samples(name: string, labels: Readonly<Record<string, string>>, out: Sample[]): void {
    if (this.count === 0) return;
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += this.counts[i] as number;
      out.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
    });
    out.push({ labels: { ...labels, le: "+Inf" }, value: this.count, metricName: `${name}_bucket` });
    out.push({ labels, value: this.sum, metricName: `${name}_sum` });
    out.push({ labels, value: this.count, metricName: `${name}_count` });
  }
}

/** Puts a metric on the registry whose samples are built from our counters when /metrics is scraped. */
function registerScraped(
  registry: Registry,
  name: string,
  help: string,
  type: "counter" | "histogram",
  values: () => Sample[],
  reset: () => void,
): void {
  const metric: CustomMetric = {
    name,
    help,
    type,
    aggregator: "sum",
    get: async () => ({ name, help, type, aggregator: "sum", values: values() }),
    reset,
  };
  registry.registerMetric(metric as unknown as Metric);
}

/** Counts by a chain of label values, as nested maps: no key string is built on the request path. */
type Counts = Map<string, Map<string, Map<string, number>>>;

function countIn(counts: Counts, a: string, b: string, c: string): void {
  let byB = counts.get(a);
  if (!byB) {
    byB = new Map();
    counts.set(a, byB);
  }
  let byC = byB.get(b);
  if (!byC) {
    byC = new Map();
    byB.set(b, byC);
  }
  byC.set(c, (byC.get(c) ?? 0) + 1);
}

function countSamples(counts: Counts, [na, nb, nc]: readonly [string, string, string]): Sample[] {
  const out: Sample[] = [];
  for (const [a, byB] of counts)
    for (const [b, byC] of byB)
      for (const [c, value] of byC) out.push({ labels: { [na]: a, [nb]: b, [nc]: c }, value });
  return out;
}

interface MetricSpec<L extends readonly string[]> {
  readonly name: string;
  readonly help: string;
  readonly labels: L;
}

/**
 * A counter by three labels and a histogram of durations by the first one or two of them, as one
 * record() call: what both the review metrics and the per-policy metrics are.
 */
export class CountedDurations {
  /** first → second → third label → count. */
  private readonly counts: Counts = new Map();
  /** first → second label ("" when the histogram has one label) → durations. */
  private readonly durations = new Map<string, Map<string, Buckets>>();
  /** Whether the histogram has the second label too. */
  private readonly byTwo: boolean;

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
    counter: MetricSpec<readonly [string, string, string]>,
    histogram: MetricSpec<readonly [string] | readonly [string, string]>,
  ) {
    const reset = () => {
      this.counts.clear();
      this.durations.clear();
    };
    registerScraped(
      registry,
      counter.name,
      counter.help,
      "counter",
      () => countSamples(this.counts, counter.labels),
      reset,
    );
    const [h0, h1] = histogram.labels;
    registerScraped(
      registry,
      histogram.name,
      histogram.help,
      "histogram",
      () => {
        const out: Sample[] = [];
        for (const [a, byB] of this.durations)
          for (const [b, buckets] of byB)
            buckets.samples(histogram.name, h1 === undefined ? { [h0]: a } : { [h0]: a, [h1]: b }, out);
        return out;
      },
      reset,
    );
    this.byTwo = h1 !== undefined;
  }

  record(a: string, b: string, c: string, seconds: number): void {
    countIn(this.counts, a, b, c);
    let byB = this.durations.get(a);
    if (!byB) {
      byB = new Map();
      this.durations.set(a, byB);
    }
    const key = this.byTwo ? b : "";
    let buckets = byB.get(key);
    if (!buckets) {
      buckets = new Buckets(this.bounds);
      byB.set(key, buckets);
    }
    buckets.observe(seconds);
  }
}
