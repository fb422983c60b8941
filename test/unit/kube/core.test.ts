/**
 * core/v1 defaults, each test citing the function of kubernetes pkg/apis/core/v1/defaults.go (or the
 * `+default` marker of k8s.io/api core/v1/types.go, release 1.37) it checks, as the generated
 * SetObjectDefaults_* of zz_generated.defaults.go call them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { withDefaults } from "../../../src/kube/defaults/index.ts";

type Json = Record<string, unknown>;

/** The value at a path of keys and indices; undefined where the path ends early. */
function at(v: unknown, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>(
    (o, k) => (o !== null && typeof o === "object" ? (o as Record<string | number, unknown>)[k] : undefined),
    v,
  );
}

const defaulted = (object: Json) => withDefaults(object).object;
const pod = (spec: Json, metadata: Json = { name: "p" }) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata,
  spec,
});
const specOf = (o: Json) => o.spec as Json;
const containerOf = (o: Json, list = "containers", i = 0) => (specOf(o)[list] as Json[])[i] as Json;

test("SetObjectDefaults_Pod on a minimal pod: the object admission sees", () => {
  const r = withDefaults(pod({ containers: [{ name: "app", image: "nginx:1.27" }] }));
  assert.deepEqual(r.object, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: {
      containers: [
        {
          name: "app",
          image: "nginx:1.27",
          imagePullPolicy: "IfNotPresent",
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
        },
      ],
      enableServiceLinks: true,
      dnsPolicy: "ClusterFirst",
      restartPolicy: "Always",
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: "default-scheduler",
    },
  });
  assert.deepEqual(
    r.defaulted.map((f) => f.path),
    [
      "spec.enableServiceLinks",
      "spec.dnsPolicy",
      "spec.restartPolicy",
      "spec.securityContext",
      "spec.terminationGracePeriodSeconds",
      "spec.schedulerName",
      "spec.containers[0].imagePullPolicy",
      "spec.containers[0].terminationMessagePath",
      "spec.containers[0].terminationMessagePolicy",
    ],
  );
});

test("SetDefaults_PodSpec: values that are set are kept; an empty string counts as unset, a zero pointer does not", () => {
  const o = defaulted(
    pod({
      containers: [],
      dnsPolicy: "",
      restartPolicy: "Never",
      securityContext: { runAsNonRoot: true },
      terminationGracePeriodSeconds: 0,
      schedulerName: "custom",
      enableServiceLinks: false,
    }),
  );
  assert.deepEqual(specOf(o), {
    containers: [],
    dnsPolicy: "ClusterFirst",
    restartPolicy: "Never",
    securityContext: { runAsNonRoot: true },
    terminationGracePeriodSeconds: 0,
    schedulerName: "custom",
    enableServiceLinks: false,
  });
});

test("SetDefaults_Container: imagePullPolicy from the tag, termination message path and policy", () => {
  const o = defaulted(
    pod({
      containers: [
        { name: "a", image: "nginx" },
        { name: "b", image: "nginx:latest" },
        { name: "c", image: "nginx:1.27" },
        {
          name: "d",
          image: "nginx:latest",
          imagePullPolicy: "Never",
          terminationMessagePath: "/tmp/x",
          terminationMessagePolicy: "FallbackToLogsOnError",
        },
        { name: "e" },
      ],
    }),
  );
  const policies = (specOf(o).containers as Json[]).map((c) => c.imagePullPolicy);
  assert.deepEqual(policies, ["Always", "Always", "IfNotPresent", "Never", "IfNotPresent"]);
  assert.equal(containerOf(o, "containers", 3).terminationMessagePath, "/tmp/x");
  assert.equal(containerOf(o, "containers", 3).terminationMessagePolicy, "FallbackToLogsOnError");
});

test("SetDefaults_EphemeralContainer and init containers get the container defaults", () => {
  const o = defaulted(
    pod({
      containers: [],
      initContainers: [{ name: "init", image: "busybox" }],
      ephemeralContainers: [{ name: "debug", image: "busybox:1.36" }],
    }),
  );
  assert.equal(containerOf(o, "initContainers").imagePullPolicy, "Always");
  assert.equal(containerOf(o, "ephemeralContainers").imagePullPolicy, "IfNotPresent");
  assert.equal(containerOf(o, "ephemeralContainers").terminationMessagePolicy, "File");
});

test('ContainerPort.Protocol +default="TCP"; env fieldRef apiVersion (SetDefaults_ObjectFieldSelector) and fileKeyRef optional +default=false', () => {
  const o = defaulted(
    pod({
      containers: [
        {
          name: "a",
          image: "a:1",
          ports: [{ containerPort: 80 }, { containerPort: 53, protocol: "UDP" }],
          env: [
            { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
            { name: "F", valueFrom: { fileKeyRef: { volumeName: "v", path: "p", key: "k" } } },
            {
              name: "G",
              valueFrom: { fileKeyRef: { volumeName: "v", path: "p", key: "k", optional: true } },
            },
            { name: "PLAIN", value: "x" },
          ],
        },
      ],
    }),
  );
  const c = containerOf(o);
  assert.deepEqual(c.ports, [
    { containerPort: 80, protocol: "TCP" },
    { containerPort: 53, protocol: "UDP" },
  ]);
  const env = c.env as Json[];
  assert.deepEqual(env[0], {
    name: "NODE",
    valueFrom: { fieldRef: { fieldPath: "spec.nodeName", apiVersion: "v1" } },
  });
  assert.equal(at(env, 1, "valueFrom", "fileKeyRef", "optional"), false);
  assert.equal(at(env, 2, "valueFrom", "fileKeyRef", "optional"), true);
  assert.deepEqual(env[3], { name: "PLAIN", value: "x" });
});

test('SetDefaults_Probe, SetDefaults_HTTPGetAction and GRPCAction.Service +default="" on every probe and hook', () => {
  const o = defaulted(
    pod({
      containers: [
        {
          name: "a",
          image: "a:1",
          livenessProbe: { httpGet: { port: 8080 } },
          readinessProbe: { grpc: { port: 9000 }, periodSeconds: 5 },
          startupProbe: { tcpSocket: { port: 80 }, failureThreshold: 30 },
          lifecycle: {
            preStop: { httpGet: { port: 80, path: "/stop" } },
            postStart: { exec: { command: ["x"] } },
          },
        },
      ],
    }),
  );
  const c = containerOf(o);
  assert.deepEqual(c.livenessProbe, {
    httpGet: { port: 8080, path: "/", scheme: "HTTP" },
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  });
  assert.deepEqual(c.readinessProbe, {
    grpc: { port: 9000, service: "" },
    periodSeconds: 5,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
  });
  assert.equal((c.startupProbe as Json).failureThreshold, 30);
  assert.deepEqual(c.lifecycle, {
    preStop: { httpGet: { port: 80, path: "/stop", scheme: "HTTP" } },
    postStart: { exec: { command: ["x"] } },
  });
});

test("SetDefaults_Pod: a limit without a request gives the request its value (containers and init containers, not ephemeral)", () => {
  const o = defaulted(
    pod({
      containers: [
        { name: "a", image: "a:1", resources: { limits: { cpu: "1", memory: "1Gi" } } },
        { name: "b", image: "a:1", resources: { limits: { cpu: "2" }, requests: { cpu: "500m" } } },
        { name: "c", image: "a:1", resources: { requests: { cpu: "1" } } },
        { name: "d", image: "a:1", resources: { limits: {} } },
      ],
      initContainers: [{ name: "i", image: "a:1", resources: { limits: { memory: "64Mi" } } }],
      ephemeralContainers: [{ name: "e", image: "a:1", resources: { limits: { cpu: "1" } } }],
    }),
  );
  const resources = (list: string, i: number) => containerOf(o, list, i).resources;
  assert.deepEqual(resources("containers", 0), {
    limits: { cpu: "1", memory: "1Gi" },
    requests: { cpu: "1", memory: "1Gi" },
  });
  assert.deepEqual(resources("containers", 1), { limits: { cpu: "2" }, requests: { cpu: "500m" } });
  assert.deepEqual(resources("containers", 2), { requests: { cpu: "1" } });
  assert.deepEqual(resources("containers", 3), { limits: {} });
  assert.deepEqual(resources("initContainers", 0), {
    limits: { memory: "64Mi" },
    requests: { memory: "64Mi" },
  });
  assert.deepEqual(resources("ephemeralContainers", 0), { limits: { cpu: "1" } });
});

test("SetDefaults_Pod: with hostNetwork, container ports' hostPort defaults to containerPort (pods only, not templates)", () => {
  const spec = {
    hostNetwork: true,
    containers: [
      { name: "a", image: "a:1", ports: [{ containerPort: 8080 }, { containerPort: 9090, hostPort: 9091 }] },
    ],
    initContainers: [{ name: "i", image: "a:1", ports: [{ containerPort: 7070 }] }],
  };
  const o = defaulted(pod(structuredClone(spec)));
  assert.deepEqual(
    (containerOf(o).ports as Json[]).map((p) => p.hostPort),
    [8080, 9091],
  );
  assert.equal(((containerOf(o, "initContainers").ports as Json[])[0] as Json).hostPort, 7070);
  const template = defaulted({
    apiVersion: "v1",
    kind: "PodTemplate",
    metadata: { name: "t" },
    template: { spec: structuredClone(spec) },
  });
  const tc = (((template.template as Json).spec as Json).containers as Json[])[0] as Json;
  assert.equal(((tc.ports as Json[])[0] as Json).hostPort, undefined);
});

test("SetDefaults_Volume: a volume without a source is an emptyDir; an image volume's pullPolicy follows its tag", () => {
  const o = defaulted(
    pod({
      containers: [],
      volumes: [
        { name: "scratch" },
        { name: "nulls", secret: null },
        { name: "img", image: { reference: "registry.example.com/data:latest" } },
        { name: "img2", image: { reference: "registry.example.com/data:v1" } },
        { name: "img3", image: { reference: "data:latest", pullPolicy: "Never" } },
      ],
    }),
  );
  const volumes = specOf(o).volumes as Json[];
  assert.deepEqual(volumes[0], { name: "scratch", emptyDir: {} });
  assert.deepEqual(volumes[1], { name: "nulls", secret: null, emptyDir: {} });
  assert.equal(at(volumes, 2, "image", "pullPolicy"), "Always");
  assert.equal(at(volumes, 3, "image", "pullPolicy"), "IfNotPresent");
  assert.equal(at(volumes, 4, "image", "pullPolicy"), "Never");
});

test("volume sources: defaultMode 0644 (Secret, ConfigMap, DownwardAPI, Projected), hostPath type, token expiry, markers", () => {
  const o = defaulted(
    pod({
      containers: [],
      volumes: [
        { name: "s", secret: { secretName: "x" } },
        { name: "c", configMap: { name: "x", defaultMode: 256 } },
        {
          name: "d",
          downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] },
        },
        {
          name: "p",
          projected: {
            sources: [
              { serviceAccountToken: { path: "token" } },
              { downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" } }] } },
            ],
          },
        },
        { name: "h", hostPath: { path: "/data" } },
        { name: "i", iscsi: { targetPortal: "t", iqn: "q", lun: 0 } },
        { name: "r", rbd: { monitors: ["m"], image: "i" } },
        { name: "z", azureDisk: { diskName: "d", diskURI: "u" } },
        { name: "o", scaleIO: { gateway: "g", system: "s", secretRef: { name: "x" } } },
        { name: "e", ephemeral: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"] } } } },
      ],
    }),
  );
  const v = Object.fromEntries((specOf(o).volumes as Json[]).map((x) => [x.name, x]));
  assert.equal(at(v.s, "secret", "defaultMode"), 420); // SetDefaults_SecretVolumeSource
  assert.equal(at(v.c, "configMap", "defaultMode"), 256); // SetDefaults_ConfigMapVolumeSource keeps a set mode
  assert.deepEqual(v.d?.downwardAPI, {
    items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels", apiVersion: "v1" } }],
    defaultMode: 420,
  }); // SetDefaults_DownwardAPIVolumeSource, SetDefaults_ObjectFieldSelector
  assert.deepEqual(v.p?.projected, {
    sources: [
      { serviceAccountToken: { path: "token", expirationSeconds: 3600 } }, // SetDefaults_ServiceAccountTokenProjection
      { downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name", apiVersion: "v1" } }] } },
    ],
    defaultMode: 420,
  }); // SetDefaults_ProjectedVolumeSource
  assert.deepEqual(v.h?.hostPath, { path: "/data", type: "" }); // SetDefaults_HostPathVolumeSource: HostPathUnset
  assert.equal(at(v.i, "iscsi", "iscsiInterface"), "default"); // +default="default"
  assert.deepEqual(v.r?.rbd, {
    monitors: ["m"],
    image: "i",
    pool: "rbd",
    user: "admin",
    keyring: "/etc/ceph/keyring",
  });
  assert.deepEqual(v.z?.azureDisk, {
    diskName: "d",
    diskURI: "u",
    cachingMode: "ReadWrite",
    fsType: "ext4",
    readOnly: false,
    kind: "Shared",
  });
  assert.deepEqual(v.o?.scaleIO, {
    gateway: "g",
    system: "s",
    secretRef: { name: "x" },
    storageMode: "ThinProvisioned",
    fsType: "xfs",
  });
  assert.deepEqual(
    at(v.e, "ephemeral", "volumeClaimTemplate", "spec"),
    { accessModes: ["ReadWriteOnce"], volumeMode: "Filesystem" }, // SetDefaults_PersistentVolumeClaimSpec
  );
});

test("fields of the wrong JSON type are left for validation; defaulting never throws", () => {
  const o = defaulted(
    pod({
      containers: [{ name: "a", image: 5, imagePullPolicy: 3, ports: "80" }],
      volumes: "x",
      dnsPolicy: 7,
    }),
  );
  assert.deepEqual(containerOf(o), {
    name: "a",
    image: 5,
    imagePullPolicy: 3,
    ports: "80",
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
  });
  assert.equal(specOf(o).dnsPolicy, 7);
  assert.deepEqual(defaulted({ apiVersion: "v1", kind: "Pod", spec: "nonsense" }), {
    apiVersion: "v1",
    kind: "Pod",
    spec: "nonsense",
  });
});

// ---- Service --------------------------------------------------------------------------------

const service = (spec: Json, status?: Json) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "s" },
  spec,
  ...(status ? { status } : {}),
});

test("SetDefaults_Service: ClusterIP, affinity None, ports TCP with targetPort = port, internal traffic Cluster", () => {
  const o = defaulted(
    service({
      selector: { app: "a" },
      ports: [{ port: 80 }, { port: 53, protocol: "UDP", targetPort: "dns" }, { port: 8080, targetPort: 0 }],
    }),
  );
  assert.deepEqual(o.spec, {
    selector: { app: "a" },
    ports: [
      { port: 80, protocol: "TCP", targetPort: 80 },
      { port: 53, protocol: "UDP", targetPort: "dns" },
      { port: 8080, targetPort: 8080, protocol: "TCP" },
    ],
    sessionAffinity: "None",
    type: "ClusterIP",
    internalTrafficPolicy: "Cluster",
  });
});

test("SetDefaults_Service: sessionAffinityConfig is dropped with affinity None and filled for ClientIP", () => {
  const none = withDefaults(service({ sessionAffinityConfig: { clientIP: { timeoutSeconds: 5 } } }));
  assert.equal((none.object.spec as Json).sessionAffinityConfig, undefined);
  assert.ok(none.defaulted.some((f) => f.path === "spec.sessionAffinityConfig" && f.removed));
  const clientIP = defaulted(service({ sessionAffinity: "ClientIP" }));
  assert.deepEqual((clientIP.spec as Json).sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
  const kept = defaulted(
    service({ sessionAffinity: "ClientIP", sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }),
  );
  assert.deepEqual((kept.spec as Json).sessionAffinityConfig, { clientIP: { timeoutSeconds: 60 } });
});

test("SetDefaults_Service: externally accessible services get externalTrafficPolicy Cluster; LoadBalancers node ports and ipMode VIP", () => {
  const lb = defaulted(
    service(
      { type: "LoadBalancer" },
      { loadBalancer: { ingress: [{ ip: "1.2.3.4" }, { hostname: "lb.example.com" }] } },
    ),
  );
  assert.equal((lb.spec as Json).externalTrafficPolicy, "Cluster");
  assert.equal((lb.spec as Json).allocateLoadBalancerNodePorts, true);
  assert.equal((lb.spec as Json).internalTrafficPolicy, "Cluster");
  assert.deepEqual(lb.status, {
    loadBalancer: { ingress: [{ ip: "1.2.3.4", ipMode: "VIP" }, { hostname: "lb.example.com" }] },
  });
  const nodePort = defaulted(service({ type: "NodePort", externalTrafficPolicy: "Local" }));
  assert.equal((nodePort.spec as Json).externalTrafficPolicy, "Local");
  assert.equal((nodePort.spec as Json).allocateLoadBalancerNodePorts, undefined);
  const externalIPs = defaulted(service({ externalIPs: ["10.0.0.1"] }));
  assert.equal((externalIPs.spec as Json).externalTrafficPolicy, "Cluster");
  const clusterIP = defaulted(service({}));
  assert.equal((clusterIP.spec as Json).externalTrafficPolicy, undefined);
  const external = defaulted(service({ type: "ExternalName", externalName: "db.example.com" }));
  assert.equal((external.spec as Json).internalTrafficPolicy, undefined);
});

// ---- Namespace, ConfigMap, Secret and the rest ------------------------------------------------

test("SetDefaults_Namespace: the kubernetes.io/metadata.name label, always the name; SetDefaults_NamespaceStatus: Active", () => {
  const r = withDefaults({ apiVersion: "v1", kind: "Namespace", metadata: { name: "example" } });
  assert.deepEqual(r.object, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "example", labels: { "kubernetes.io/metadata.name": "example" } },
    status: { phase: "Active" },
  });
  assert.deepEqual(r.defaulted[0], {
    path: 'metadata.labels["kubernetes.io/metadata.name"]',
    value: "example",
  });
  const wrong = defaulted({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "a", labels: { "kubernetes.io/metadata.name": "b", x: "y" } },
  });
  assert.deepEqual((wrong.metadata as Json).labels, { "kubernetes.io/metadata.name": "a", x: "y" });
  // A namespace with only generateName has no name to put in the label yet.
  const generated = defaulted({ apiVersion: "v1", kind: "Namespace", metadata: { generateName: "ns-" } });
  assert.deepEqual(generated.metadata, { generateName: "ns-" });
});

test("SetDefaults_ConfigMap's empty data map serializes as nothing (omitempty): admission sees the ConfigMap as sent", () => {
  const r = withDefaults({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } });
  assert.deepEqual(r.object, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } });
  assert.deepEqual(r.defaulted, []);
});

test("SetDefaults_Secret: type Opaque", () => {
  assert.equal(defaulted({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" } }).type, "Opaque");
  assert.equal(
    defaulted({ apiVersion: "v1", kind: "Secret", type: "kubernetes.io/tls" }).type,
    "kubernetes.io/tls",
  );
});

test("SetDefaults_ReplicationController: selector and labels from the template, replicas +default=1, the template's pod defaults", () => {
  const o = defaulted({
    apiVersion: "v1",
    kind: "ReplicationController",
    metadata: { name: "rc" },
    spec: {
      template: { metadata: { labels: { app: "a" } }, spec: { containers: [{ name: "a", image: "a:1" }] } },
    },
  });
  const spec = o.spec as Json;
  assert.deepEqual(spec.selector, { app: "a" });
  assert.deepEqual((o.metadata as Json).labels, { app: "a" });
  assert.equal(spec.replicas, 1);
  assert.equal(((spec.template as Json).spec as Json).restartPolicy, "Always");
});

test("SetObjectDefaults_PodTemplate, SetDefaults_PersistentVolumeClaim(Spec), SetDefaults_Endpoints", () => {
  const t = defaulted({ apiVersion: "v1", kind: "PodTemplate", template: { spec: { containers: [] } } });
  assert.equal(((t.template as Json).spec as Json).dnsPolicy, "ClusterFirst");
  const pvc = defaulted({
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "c" },
    spec: { accessModes: ["ReadWriteOnce"] },
  });
  assert.deepEqual(pvc.spec, { accessModes: ["ReadWriteOnce"], volumeMode: "Filesystem" });
  assert.deepEqual(pvc.status, { phase: "Pending" });
  const ep = defaulted({
    apiVersion: "v1",
    kind: "Endpoints",
    subsets: [{ ports: [{ port: 80 }, { port: 53, protocol: "UDP" }] }],
  });
  assert.deepEqual(ep.subsets, [
    {
      ports: [
        { port: 80, protocol: "TCP" },
        { port: 53, protocol: "UDP" },
      ],
    },
  ]);
});

// Kubernetes 1.37's pkg/apis/core/v1/defaults.go: SetDefaults_Pod turns a negative grace period
// into 1 on a Pod (not a template); SetDefaults_PodSpec keeps the deprecated `serviceAccount`
// equal to `serviceAccountName`, the latter winning (before 1.37, conversion did the same).
test("1.37 SetDefaults_Pod: a negative terminationGracePeriodSeconds becomes 1, on pods only", () => {
  assert.equal(
    specOf(defaulted(pod({ containers: [], terminationGracePeriodSeconds: -5 })))
      .terminationGracePeriodSeconds,
    1,
  );
  assert.equal(
    specOf(defaulted(pod({ containers: [], terminationGracePeriodSeconds: 0 })))
      .terminationGracePeriodSeconds,
    0,
  );
  const template = defaulted({
    apiVersion: "v1",
    kind: "PodTemplate",
    metadata: { name: "t" },
    template: { spec: { containers: [], terminationGracePeriodSeconds: -5 } },
  });
  assert.equal(at(template, "template", "spec", "terminationGracePeriodSeconds"), -5);
});

test("1.37 SetDefaults_PodSpec: serviceAccount and serviceAccountName are kept equal, serviceAccountName winning", () => {
  const fromAlias = specOf(defaulted(pod({ containers: [], serviceAccount: "a" })));
  assert.equal(fromAlias.serviceAccountName, "a");
  assert.equal(fromAlias.serviceAccount, "a");
  const fromName = specOf(defaulted(pod({ containers: [], serviceAccountName: "b" })));
  assert.equal(fromName.serviceAccount, "b");
  const both = specOf(defaulted(pod({ containers: [], serviceAccountName: "b", serviceAccount: "a" })));
  assert.deepEqual([both.serviceAccountName, both.serviceAccount], ["b", "b"]);
  const neither = specOf(defaulted(pod({ containers: [] })));
  assert.equal("serviceAccount" in neither || "serviceAccountName" in neither, false);
});

// SetDefaults_PodStatus (new in 1.37): podIP and podIPs agree, podIP winning.
test("1.37 SetDefaults_PodStatus: podIP and podIPs kept in agreement", () => {
  const withStatus = (status: Json) => ({ ...pod({ containers: [] }), status });
  assert.deepEqual(at(defaulted(withStatus({ podIP: "10.0.0.1" })), "status", "podIPs"), [
    { ip: "10.0.0.1" },
  ]);
  assert.equal(at(defaulted(withStatus({ podIPs: [{ ip: "10.0.0.2" }] })), "status", "podIP"), "10.0.0.2");
  assert.deepEqual(
    at(
      defaulted(withStatus({ podIP: "10.0.0.1", podIPs: [{ ip: "10.0.0.2" }, { ip: "fd00::1" }] })),
      "status",
      "podIPs",
    ),
    [{ ip: "10.0.0.1" }],
  );
  const agreeing = [{ ip: "10.0.0.1" }, { ip: "fd00::1" }];
  assert.deepEqual(
    at(defaulted(withStatus({ podIP: "10.0.0.1", podIPs: agreeing })), "status", "podIPs"),
    agreeing,
  );
});
