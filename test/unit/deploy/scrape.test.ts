/**
 * What makes Prometheus scrape celgate, checked against the objects it points at and against the
 * real metrics listener: without a scrape, prometheusrule.yaml's CelgateDown (absent(up{job="celgate"}
 * == 1)) fires at once. The prometheus-operator turns a ServiceMonitor endpoint into a scrape of
 * each endpoint of the selected Services, at `scheme://<pod IP>:<targetPort><path>`, with
 * job="<Service name>" unless spec.jobLabel says otherwise (prometheus-operator
 * Documentation/api-reference: ServiceMonitorSpec.jobLabel, Endpoint.port).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import { send } from "../../helpers/https.ts";
import { startTestWebhook } from "../../helpers/webhook.ts";

const read = (file: string) =>
  parse(readFileSync(new URL(`../../../deploy/${file}`, import.meta.url), "utf8")) as never;

interface ServiceMonitor {
  metadata: { name: string; namespace: string };
  spec: {
    jobLabel?: string;
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    endpoints: { port: string; path: string; scheme: string; interval: string }[];
  };
}
interface Service {
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: { ports: { name: string; port: number; targetPort: string | number }[] };
}
interface Deployment {
  spec: {
    template: {
      metadata: { annotations: Record<string, string> };
      spec: { containers: { args: string[]; ports: { name: string; containerPort: number }[] }[] };
    };
  };
}

const monitor: ServiceMonitor = read("monitoring/servicemonitor.yaml");
const service: Service = read("service.yaml");
const deployment: Deployment = read("deployment.yaml");
const container = deployment.spec.template.spec.containers[0]!;
const metricsPort = Number(container.args[container.args.indexOf("--metrics-port") + 1]);

function containerPort(target: string | number): number | undefined {
  return typeof target === "number" ? target : container.ports.find((p) => p.name === target)?.containerPort;
}

void test("the ServiceMonitor selects the Service, in celgate's namespace, on the port serve's metrics listen on", () => {
  for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels))
    assert.equal(service.metadata.labels[k], v, `the Service carries ${k}=${v}`);
  assert.ok(monitor.spec.namespaceSelector.matchNames.includes(service.metadata.namespace));
  assert.equal(monitor.metadata.namespace, service.metadata.namespace);
  for (const e of monitor.spec.endpoints) {
    const port = service.spec.ports.find((p) => p.name === e.port);
    assert.ok(port, `endpoint port ${e.port} is a port of the Service`);
    assert.equal(containerPort(port.targetPort), metricsPort, "it reaches the container's --metrics-port");
    assert.equal(e.scheme, "http", "the metrics listener is plain HTTP");
  }
});

void test("the series get the job the alerts ask for", () => {
  assert.equal(monitor.spec.jobLabel, undefined, "the job is the Service's name");
  const rule = parseAllDocuments(
    readFileSync(new URL("../../../deploy/monitoring/prometheusrule.yaml", import.meta.url), "utf8"),
  )[0]?.toJS() as {
    spec: { groups: { rules: { alert: string; expr: string }[] }[] };
  };
  const jobs = new Set(
    rule.spec.groups
      .flatMap((g) => g.rules)
      .flatMap((r) => [...r.expr.matchAll(/job="([^"]+)"/g)].map((m) => m[1])),
  );
  assert.deepEqual([...jobs], [service.metadata.name]);
});

void test("the Pods' scrape annotations name the metrics port and path", () => {
  const a = deployment.spec.template.metadata.annotations;
  assert.equal(a["prometheus.io/scrape"], "true");
  assert.equal(Number(a["prometheus.io/port"]), metricsPort);
  assert.equal(a["prometheus.io/path"], monitor.spec.endpoints[0]?.path);
});

void test("a scrape of the endpoint, as Prometheus makes it, gets every metric the alerts use", async (t) => {
  const hook = await startTestWebhook(t, {
    policies: [new URL("../../../policies", import.meta.url).pathname],
  });
  const endpoint = monitor.spec.endpoints[0]!;
  const res = await send({
    scheme: endpoint.scheme as "http",
    port: Number(new URL(hook.webhook.metricsUrl).port),
    path: endpoint.path,
    headers: { accept: "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5" },
    timeoutMs: 5000,
  });
  assert.equal(res.status, 200);
  assert.match(String(res.headers["content-type"]), /^text\/plain|^application\/openmetrics-text/);
  // Every family is declared at once; a histogram's _bucket series come with the first review.
  for (const metric of [
    "celgate_admission_requests_total",
    "celgate_admission_review_duration_seconds",
    "celgate_policy_last_reload_success",
    "celgate_policy_compile_errors",
    "celgate_certificate_expiry_timestamp_seconds",
  ])
    assert.match(res.body, new RegExp(`^# TYPE ${metric} `, "m"), metric);
});
