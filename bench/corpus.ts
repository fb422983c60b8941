/**
 * A deterministic corpus of varied Pods as plain JSON, for the CEL benchmark and its correctness gate.
 * Every choice comes from a seeded PRNG, so the same seed always yields byte-identical JSON. Each Pod
 * leans towards one of a few "postures" (restricted, baseline, privileged, sloppy) so that every rule
 * in rules.ts sees both passing and failing Pods, and short-circuiting happens at varied depths.
 */

export interface SeLinuxOptions {
  user?: string;
  role?: string;
  type?: string;
  level?: string;
}

export interface Profile {
  type: string;
  localhostProfile?: string;
}

export interface Capabilities {
  add?: string[];
  drop?: string[];
}

export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: Capabilities;
  seccompProfile?: Profile;
  appArmorProfile?: Profile;
  readOnlyRootFilesystem?: boolean;
  procMount?: string;
  seLinuxOptions?: SeLinuxOptions;
}

export interface PodSecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  supplementalGroups?: number[];
  seccompProfile?: Profile;
  appArmorProfile?: Profile;
  seLinuxOptions?: SeLinuxOptions;
  sysctls?: { name: string; value: string }[];
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  protocol: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}

export interface Probe {
  httpGet?: { path: string; port: number; scheme: string };
  tcpSocket?: { port: number };
  exec?: { command: string[] };
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  ports?: ContainerPort[];
  env?: EnvVar[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: SecurityContext;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  targetContainerName?: string;
}

export interface Volume {
  name: string;
  hostPath?: { path: string; type: string };
  emptyDir?: { medium?: string; sizeLimit?: string };
  secret?: { secretName: string; defaultMode: number };
  configMap?: { name: string; defaultMode: number };
  persistentVolumeClaim?: { claimName: string };
  nfs?: { server: string; path: string };
  projected?: {
    defaultMode: number;
    sources: (
      | { serviceAccountToken: { expirationSeconds: number; path: string } }
      | { configMap: { name: string; items: { key: string; path: string }[] } }
      | { downwardAPI: { items: { path: string; fieldRef: { apiVersion: string; fieldPath: string } }[] } }
    )[];
  };
}

export interface Pod {
  apiVersion: "v1";
  kind: "Pod";
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generateName?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: {
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller: boolean;
      blockOwnerDeletion: boolean;
    }[];
  };
  spec: {
    containers: Container[];
    initContainers?: Container[];
    ephemeralContainers?: Container[];
    volumes?: Volume[];
    securityContext?: PodSecurityContext;
    hostNetwork?: boolean;
    hostPID?: boolean;
    hostIPC?: boolean;
    serviceAccountName: string;
    restartPolicy: string;
    dnsPolicy: string;
    terminationGracePeriodSeconds: number;
    schedulerName: string;
    priority?: number;
    nodeSelector?: Record<string, string>;
    tolerations?: { key: string; operator: string; effect: string; tolerationSeconds?: number }[];
    enableServiceLinks?: boolean;
  };
}

/** mulberry32: tiny, fast, and good enough to pick fields; the state is one 32-bit integer. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  hex(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[this.int(0, 15)];
    return s;
  }
  /** Each item kept with probability `p`, in the order of `items`. */
  subset<T>(items: readonly T[], p: number): T[] {
    return items.filter(() => this.chance(p));
  }
}

type Posture = "restricted" | "baseline" | "privileged" | "sloppy";

const REGISTRIES = [
  "",
  "docker.io/library/",
  "registry.k8s.io/",
  "gcr.io/acme-prod/",
  "ghcr.io/acme/",
  "quay.io/jetstack/",
  "registry.example.com:5000/team-a/",
  "123456789012.dkr.ecr.eu-west-1.amazonaws.com/",
] as const;

const IMAGE_NAMES = [
  "nginx",
  "redis",
  "busybox",
  "envoy",
  "payments-api",
  "orders-worker",
  "pause",
  "fluent-bit",
  "postgres",
  "kube-state-metrics",
] as const;

const TAGS = ["1.25.3", "7.2-alpine", "v2.14.1", "3.19", "2024.11.02-ab12cd3", "stable", "latest"] as const;

const CONTAINER_NAMES = [
  "app",
  "sidecar",
  "proxy",
  "metrics-exporter",
  "log-shipper",
  "worker",
  "init-db",
  "migrate",
] as const;
/** Names a DNS-label check must reject. */
const BAD_NAMES = ["App_Server", "sidecar.v2", "-leading-dash", "trailing-dash-", "x".repeat(70)] as const;

const BASELINE_CAPS = ["NET_BIND_SERVICE", "CHOWN", "SETUID", "SETGID", "KILL"] as const;
const DANGEROUS_CAPS = ["SYS_ADMIN", "NET_ADMIN", "NET_RAW", "SYS_PTRACE", "SYS_TIME"] as const;

const SAFE_SYSCTLS = ["net.ipv4.ip_local_port_range", "kernel.shm_rmid_forced", "net.ipv4.tcp_syncookies"];
const UNSAFE_SYSCTLS = ["kernel.msgmax", "net.core.somaxconn", "vm.max_map_count"];

function image(r: Rng): string {
  const base = `${r.pick(REGISTRIES)}${r.pick(IMAGE_NAMES)}`;
  const form = r.int(0, 9);
  if (form <= 1) return base; // no tag: implicitly latest
  if (form <= 3) return `${base}@sha256:${r.hex(64)}`;
  if (form === 4) return `${base}:${r.pick(TAGS)}@sha256:${r.hex(64)}`;
  return `${base}:${r.pick(TAGS)}`;
}

function probe(r: Rng, port: number): Probe {
  const kind = r.int(0, 2);
  const timing = {
    initialDelaySeconds: r.int(0, 30),
    periodSeconds: r.pick([5, 10, 15, 30]),
    timeoutSeconds: r.int(1, 5),
    failureThreshold: r.int(1, 6),
  };
  if (kind === 0)
    return { httpGet: { path: r.pick(["/healthz", "/ready", "/livez"]), port, scheme: "HTTP" }, ...timing };
  if (kind === 1) return { tcpSocket: { port }, ...timing };
  return { exec: { command: ["/bin/sh", "-c", "test -f /tmp/healthy"] }, ...timing };
}

function profile(r: Rng, posture: Posture): Profile {
  const t =
    posture === "restricted"
      ? r.pick(["RuntimeDefault", "RuntimeDefault", "Localhost"])
      : r.pick(["RuntimeDefault", "Localhost", "Unconfined"]);
  return t === "Localhost" ? { type: t, localhostProfile: "profiles/audit.json" } : { type: t };
}

function seLinux(r: Rng, posture: Posture): SeLinuxOptions {
  const out: SeLinuxOptions = { level: `s0:c${r.int(0, 1023)},c${r.int(0, 1023)}` };
  out.type =
    posture === "privileged"
      ? r.pick(["spc_t", "container_t", "unconfined_t"])
      : r.pick(["container_t", "container_init_t"]);
  if (posture !== "restricted" && r.chance(0.2)) out.user = "system_u";
  if (posture !== "restricted" && r.chance(0.1)) out.role = "system_r";
  return out;
}

function securityContext(r: Rng, posture: Posture): SecurityContext {
  const sc: SecurityContext = {};
  const strict = posture === "restricted";
  const lax = posture === "privileged" || posture === "sloppy";
  if (strict || r.chance(0.5)) sc.runAsNonRoot = strict ? r.chance(0.95) : r.chance(0.5);
  if (r.chance(strict ? 0.6 : 0.4)) sc.runAsUser = strict || r.chance(0.6) ? r.int(1000, 65000) : 0;
  if (r.chance(0.3)) sc.runAsGroup = r.int(1000, 3000);
  if (lax ? r.chance(0.5) : r.chance(0.15))
    sc.privileged = posture === "privileged" ? r.chance(0.7) : r.chance(0.1);
  if (strict || r.chance(0.5)) sc.allowPrivilegeEscalation = strict ? r.chance(0.05) : r.chance(0.5);
  if (strict || r.chance(0.5)) {
    const caps: Capabilities = {};
    if (strict || r.chance(0.5)) caps.drop = strict || r.chance(0.6) ? ["ALL"] : ["NET_RAW", "MKNOD"];
    if (r.chance(strict ? 0.3 : 0.5)) {
      caps.add = strict
        ? r.chance(0.9)
          ? ["NET_BIND_SERVICE"]
          : ["CHOWN"]
        : [...r.subset(BASELINE_CAPS, 0.4), ...(lax ? r.subset(DANGEROUS_CAPS, 0.3) : [])];
    }
    sc.capabilities = caps;
  }
  if (r.chance(strict ? 0.5 : 0.3)) sc.seccompProfile = profile(r, posture);
  if (r.chance(0.15)) sc.appArmorProfile = profile(r, posture);
  if (r.chance(strict ? 0.8 : 0.4)) sc.readOnlyRootFilesystem = strict ? r.chance(0.9) : r.chance(0.5);
  if (r.chance(lax ? 0.2 : 0.05)) sc.procMount = lax ? r.pick(["Default", "Unmasked"]) : "Default";
  if (r.chance(0.15)) sc.seLinuxOptions = seLinux(r, posture);
  return sc;
}

function container(r: Rng, posture: Posture, index: number, kind: "main" | "init" | "ephemeral"): Container {
  const name =
    r.chance(0.04) && posture === "sloppy"
      ? r.pick(BAD_NAMES)
      : index === 0 && kind === "main"
        ? "app"
        : `${r.pick(CONTAINER_NAMES)}-${kind === "main" ? "" : `${kind}-`}${index}`;
  const c: Container = { name, image: image(r) };
  if (r.chance(0.6)) c.imagePullPolicy = r.pick(["IfNotPresent", "Always", "Never"]);
  if (r.chance(0.5)) c.command = ["/usr/local/bin/entrypoint", "--config", "/etc/app/config.yaml"];
  if (r.chance(0.5))
    c.args = ["--log-level", r.pick(["info", "debug", "warn"]), "--listen", `:${8080 + index}`];
  const port = 8080 + index;
  if (kind !== "init" && r.chance(0.8)) {
    c.ports = [{ name: "http", containerPort: port, protocol: "TCP" }];
    if (r.chance(0.4)) c.ports.push({ name: "metrics", containerPort: 9090 + index, protocol: "TCP" });
    if (posture !== "restricted" && r.chance(posture === "privileged" ? 0.5 : 0.1)) {
      c.ports.push({ containerPort: 53, hostPort: r.chance(0.8) ? 53 : 0, protocol: r.pick(["UDP", "TCP"]) });
    }
  }
  const nEnv = r.int(0, 6);
  if (nEnv > 0) {
    c.env = [];
    for (let i = 0; i < nEnv; i++) {
      const v = r.int(0, 9);
      if (v <= 4)
        c.env.push({
          name: `APP_SETTING_${i}`,
          value: r.pick(["true", "production", "eu-west-1", "30s", "8"]),
        });
      else if (v <= 6 && posture !== "restricted")
        c.env.push({
          name: `DB_PASSWORD_${i}`,
          valueFrom: { secretKeyRef: { name: "db-credentials", key: "password" } },
        });
      else if (v <= 7)
        c.env.push({
          name: `FEATURE_${i}`,
          valueFrom: { configMapKeyRef: { name: "features", key: `f${i}` } },
        });
      else c.env.push({ name: `POD_NAME_${i}`, valueFrom: { fieldRef: { fieldPath: "metadata.name" } } });
    }
  }
  if (kind !== "ephemeral" && r.chance(0.85)) {
    const res: NonNullable<Container["resources"]> = {};
    if (r.chance(0.9))
      res.requests = {
        cpu: r.pick(["50m", "100m", "250m", "1"]),
        memory: r.pick(["64Mi", "128Mi", "512Mi", "1Gi"]),
      };
    if (r.chance(0.7)) {
      res.limits = { memory: r.pick(["128Mi", "256Mi", "1Gi", "2Gi"]) };
      if (r.chance(0.7)) res.limits.cpu = r.pick(["200m", "500m", "2"]);
      if (r.chance(0.1)) res.limits["ephemeral-storage"] = "1Gi";
    }
    c.resources = res;
  }
  if (r.chance(0.7)) {
    c.volumeMounts = [{ name: "config", mountPath: "/etc/app", readOnly: true }];
    if (r.chance(0.5)) c.volumeMounts.push({ name: "tmp", mountPath: "/tmp" });
    if (r.chance(0.3))
      c.volumeMounts.push({
        name: "kube-api-access",
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
        readOnly: true,
      });
  }
  if (kind === "main") {
    if (r.chance(0.7)) c.livenessProbe = probe(r, port);
    if (r.chance(0.7)) c.readinessProbe = probe(r, port);
    if (r.chance(0.2)) c.startupProbe = probe(r, port);
  }
  if (kind === "ephemeral") c.targetContainerName = "app";
  if (posture === "restricted" || r.chance(0.7)) c.securityContext = securityContext(r, posture);
  c.terminationMessagePath = "/dev/termination-log";
  c.terminationMessagePolicy = "File";
  return c;
}

function volumes(r: Rng, posture: Posture): Volume[] {
  const out: Volume[] = [
    { name: "config", configMap: { name: `app-config-${r.hex(5)}`, defaultMode: 420 } },
    {
      name: "kube-api-access",
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          {
            downwardAPI: {
              items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
            },
          },
        ],
      },
    },
  ];
  if (r.chance(0.6))
    out.push({ name: "tmp", emptyDir: r.chance(0.3) ? { medium: "Memory", sizeLimit: "64Mi" } : {} });
  if (r.chance(0.4)) out.push({ name: "tls", secret: { secretName: `tls-${r.hex(4)}`, defaultMode: 256 } });
  if (r.chance(0.2)) out.push({ name: "data", persistentVolumeClaim: { claimName: "data-0" } });
  if (posture !== "restricted" && r.chance(posture === "privileged" ? 0.6 : 0.1))
    out.push({
      name: "host-logs",
      hostPath: { path: r.pick(["/var/log", "/var/run/docker.sock", "/"]), type: "Directory" },
    });
  if (posture === "sloppy" && r.chance(0.1))
    out.push({ name: "shared", nfs: { server: "10.0.0.5", path: "/exports" } });
  if (r.chance(0.15)) return out.reverse();
  return out;
}

function podSecurityContext(r: Rng, posture: Posture): PodSecurityContext {
  const strict = posture === "restricted";
  const sc: PodSecurityContext = {};
  if (r.chance(strict ? 0.8 : 0.4)) sc.runAsNonRoot = strict ? true : r.chance(0.6);
  if (r.chance(0.5)) sc.runAsUser = strict || r.chance(0.7) ? r.int(1000, 65000) : 0;
  if (r.chance(0.4)) sc.runAsGroup = r.int(1000, 3000);
  if (r.chance(0.5)) sc.fsGroup = r.int(1000, 3000);
  if (r.chance(0.2)) sc.supplementalGroups = [r.int(4000, 5000), r.int(5000, 6000)];
  if (r.chance(strict ? 0.7 : 0.35)) sc.seccompProfile = profile(r, posture);
  if (r.chance(0.1)) sc.appArmorProfile = profile(r, posture);
  if (r.chance(0.1)) sc.seLinuxOptions = seLinux(r, posture);
  if (r.chance(0.15)) {
    sc.sysctls = [{ name: r.pick(SAFE_SYSCTLS), value: "1" }];
    if (posture !== "restricted" && r.chance(0.5))
      sc.sysctls.push({ name: r.pick(UNSAFE_SYSCTLS), value: "65535" });
  }
  return sc;
}

function uid(r: Rng): string {
  return `${r.hex(8)}-${r.hex(4)}-${r.hex(4)}-${r.hex(4)}-${r.hex(12)}`;
}

/** One Pod; `i` only feeds its name, so a Pod depends on the PRNG state and its index. */
export function generatePod(r: Rng, i: number): Pod {
  const posture = r.pick<Posture>([
    "restricted",
    "restricted",
    "baseline",
    "baseline",
    "privileged",
    "sloppy",
  ]);
  const app = r.pick(["payments", "orders", "frontend", "ingest", "search", "billing"]);
  const ns = r.pick(["default", "prod", "staging", "team-a", "kube-system", "monitoring"]);
  const hash = r.hex(10);
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${app}-${hash}-${i.toString(36)}`,
      generateName: `${app}-${hash}-`,
      namespace: ns,
      uid: uid(r),
    },
    spec: {
      containers: [],
      serviceAccountName: r.chance(0.7) ? app : "default",
      restartPolicy: r.pick(["Always", "Always", "OnFailure", "Never"]),
      dnsPolicy: "ClusterFirst",
      terminationGracePeriodSeconds: r.pick([30, 30, 60, 5]),
      schedulerName: "default-scheduler",
    },
  };
  const meta = pod.metadata;
  const spec = pod.spec;
  if (r.chance(0.9)) {
    meta.labels = { app, "app.kubernetes.io/name": app, "pod-template-hash": hash };
    if (r.chance(0.6)) meta.labels["app.kubernetes.io/version"] = r.pick(["1.4.2", "2.0.0", "0.9.13"]);
    if (r.chance(0.5)) meta.labels["app.kubernetes.io/part-of"] = "shop";
    if (r.chance(0.3)) meta.labels.tier = r.pick(["frontend", "backend", "batch"]);
  }
  if (r.chance(0.85)) {
    meta.annotations = {
      "kubectl.kubernetes.io/restartedAt": `2026-11-${String(r.int(10, 28))}T0${r.int(0, 9)}:1${r.int(0, 9)}:00Z`,
    };
    if (r.chance(0.5)) meta.annotations["prometheus.io/scrape"] = "true";
    if (r.chance(0.5)) meta.annotations["prometheus.io/port"] = "9090";
    if (r.chance(0.3))
      meta.annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] = r.pick(["true", "false"]);
    if (r.chance(0.25)) {
      const value =
        posture === "restricted"
          ? r.pick(["runtime/default", "localhost/k8s-nginx"])
          : r.pick(["runtime/default", "localhost/k8s-nginx", "unconfined"]);
      meta.annotations["container.apparmor.security.beta.kubernetes.io/app"] = value;
    }
  }
  if (r.chance(0.8)) {
    meta.ownerReferences = [
      {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: `${app}-${hash}`,
        uid: uid(r),
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
  }
  const nMain = r.int(1, 4);
  for (let c = 0; c < nMain; c++) spec.containers.push(container(r, posture, c, "main"));
  if (r.chance(0.3)) {
    spec.initContainers = [];
    const n = r.int(1, 2);
    for (let c = 0; c < n; c++) spec.initContainers.push(container(r, posture, c, "init"));
  }
  if (r.chance(0.08)) spec.ephemeralContainers = [container(r, posture, 0, "ephemeral")];
  spec.volumes = volumes(r, posture);
  if (posture === "restricted" || r.chance(0.7)) spec.securityContext = podSecurityContext(r, posture);
  if (posture === "privileged") {
    if (r.chance(0.4)) spec.hostNetwork = true;
    if (r.chance(0.2)) spec.hostPID = true;
    if (r.chance(0.1)) spec.hostIPC = true;
  } else if (r.chance(0.2)) {
    spec.hostNetwork = false;
  }
  if (r.chance(0.3)) spec.priority = r.int(0, 1000);
  if (r.chance(0.4))
    spec.nodeSelector = { "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m6i.large" };
  spec.tolerations = [
    { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    {
      key: "node.kubernetes.io/unreachable",
      operator: "Exists",
      effect: "NoExecute",
      tolerationSeconds: 300,
    },
  ];
  if (r.chance(0.3)) spec.enableServiceLinks = false;
  return pod;
}

/** `n` Pods from `seed`; the same arguments always give the same Pods. */
export function generatePods(n: number, seed: number): Pod[] {
  const r = new Rng(seed);
  const out: Pod[] = [];
  for (let i = 0; i < n; i++) out.push(generatePod(r, i));
  return out;
}

/** Mean size of the Pods' compact JSON, in bytes. */
export function meanJsonSize(pods: readonly Pod[]): number {
  let total = 0;
  for (const p of pods) total += Buffer.byteLength(JSON.stringify(p));
  return pods.length === 0 ? 0 : total / pods.length;
}
