/**
 * Twenty Pod-Security-Standards-style checks, each written three ways that must agree on every Pod:
 * - `cel`: as a ValidatingAdmissionPolicy would write it (optional chaining, `all`, `has`, `matches`);
 * - `bufbuild`: the same check without optional syntax, which @bufbuild/cel 0.6.1 cannot parse
 *   (`a.?b.orValue(d)` becomes `has(a.b) ? a.b : d`); identical to `cel` where `cel` has no `.?`;
 * - `js`: a hand-written function over the plain JSON Pod, the floor any evaluator is measured against.
 * Each expression is true when the Pod is allowed.
 */
import type { Container, Pod, Profile, SeLinuxOptions } from "./corpus.ts";

export interface Rule {
  readonly name: string;
  readonly cel: string;
  readonly bufbuild: string;
  readonly js: (pod: Pod) => boolean;
}

/** Every container of the Pod, as Kyverno's and the PSS policies' `allContainers` variable. */
const ALL =
  "(object.spec.containers + object.spec.?initContainers.orValue([]) + object.spec.?ephemeralContainers.orValue([]))";
const ALL_BUF =
  "(object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])" +
  " + (has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers : []))";

/** Pod-level security-context field `f`, as a bufbuild guard: `has(...sc) && has(...sc.f)`. */
const podSc = (f: string): string =>
  `(has(object.spec.securityContext) && has(object.spec.securityContext.${f}))`;
const cSc = (f: string): string => `(has(c.securityContext) && has(c.securityContext.${f}))`;

function allContainers(p: Pod): Container[] {
  const s = p.spec;
  if (!s.initContainers && !s.ephemeralContainers) return s.containers;
  return [...s.containers, ...(s.initContainers ?? []), ...(s.ephemeralContainers ?? [])];
}

const BASELINE_CAPS = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
];
const SELINUX_TYPES = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];
const SAFE_SYSCTLS = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
];
const RESTRICTED_VOLUMES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];
const APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/";
/** A Docker tag at the end of the reference (a `:` followed by no `/`). */
const TAG_PATTERN = ":[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$";
const DNS_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const TAG_RE = new RegExp(TAG_PATTERN);
const DNS_LABEL_RE = new RegExp(DNS_LABEL_PATTERN);

const celList = (items: readonly string[]): string => `[${items.map((s) => `'${s}'`).join(", ")}]`;
const BASELINE_CAPS_CEL = celList(BASELINE_CAPS);
const SELINUX_TYPES_CEL = celList(SELINUX_TYPES);
const SAFE_SYSCTLS_CEL = celList(SAFE_SYSCTLS);

const profileOk = (p: Profile | undefined): boolean =>
  p === undefined || p.type === "RuntimeDefault" || p.type === "Localhost";
const seLinuxOk = (o: SeLinuxOptions | undefined): boolean =>
  o === undefined || (SELINUX_TYPES.includes(o.type ?? "") && o.user === undefined && o.role === undefined);

export const RULES: readonly Rule[] = [
  {
    name: "host-namespaces",
    cel: "!object.spec.?hostNetwork.orValue(false) && !object.spec.?hostPID.orValue(false) && !object.spec.?hostIPC.orValue(false)",
    bufbuild:
      "!(has(object.spec.hostNetwork) && object.spec.hostNetwork) && !(has(object.spec.hostPID) && object.spec.hostPID)" +
      " && !(has(object.spec.hostIPC) && object.spec.hostIPC)",
    js: (p) => !(p.spec.hostNetwork ?? false) && !(p.spec.hostPID ?? false) && !(p.spec.hostIPC ?? false),
  },
  {
    name: "privileged",
    cel: `${ALL}.all(c, !c.?securityContext.?privileged.orValue(false))`,
    bufbuild: `${ALL_BUF}.all(c, !(${cSc("privileged")} && c.securityContext.privileged))`,
    js: (p) => allContainers(p).every((c) => !(c.securityContext?.privileged ?? false)),
  },
  {
    name: "capabilities-baseline",
    cel: `${ALL}.all(c, c.?securityContext.?capabilities.?add.orValue([]).all(cap, cap in ${BASELINE_CAPS_CEL}))`,
    bufbuild:
      `${ALL_BUF}.all(c, !${cSc("capabilities")} || !has(c.securityContext.capabilities.add)` +
      ` || c.securityContext.capabilities.add.all(cap, cap in ${BASELINE_CAPS_CEL}))`,
    js: (p) =>
      allContainers(p).every((c) =>
        (c.securityContext?.capabilities?.add ?? []).every((cap) => BASELINE_CAPS.includes(cap)),
      ),
  },
  {
    name: "host-path-volumes",
    cel: "object.spec.?volumes.orValue([]).all(v, !has(v.hostPath))",
    bufbuild: "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))",
    js: (p) => (p.spec.volumes ?? []).every((v) => v.hostPath === undefined),
  },
  {
    name: "host-ports",
    cel: `${ALL}.all(c, c.?ports.orValue([]).all(port, port.?hostPort.orValue(0) == 0))`,
    bufbuild: `${ALL_BUF}.all(c, !has(c.ports) || c.ports.all(port, !has(port.hostPort) || port.hostPort == 0))`,
    js: (p) => allContainers(p).every((c) => (c.ports ?? []).every((port) => (port.hostPort ?? 0) === 0)),
  },
  {
    name: "apparmor",
    cel:
      `object.metadata.?annotations.orValue({}).all(k, !k.startsWith('${APPARMOR_PREFIX}')` +
      " || object.metadata.annotations[k] == 'runtime/default' || object.metadata.annotations[k].startsWith('localhost/'))" +
      " && object.spec.?securityContext.?appArmorProfile.?type.orValue('RuntimeDefault') in ['RuntimeDefault', 'Localhost']" +
      ` && ${ALL}.all(c, c.?securityContext.?appArmorProfile.?type.orValue('RuntimeDefault') in ['RuntimeDefault', 'Localhost'])`,
    bufbuild:
      `(!has(object.metadata.annotations) || object.metadata.annotations.all(k, !k.startsWith('${APPARMOR_PREFIX}')` +
      " || object.metadata.annotations[k] == 'runtime/default' || object.metadata.annotations[k].startsWith('localhost/')))" +
      ` && (!${podSc("appArmorProfile")} || !has(object.spec.securityContext.appArmorProfile.type)` +
      " || object.spec.securityContext.appArmorProfile.type in ['RuntimeDefault', 'Localhost'])" +
      ` && ${ALL_BUF}.all(c, !${cSc("appArmorProfile")} || !has(c.securityContext.appArmorProfile.type)` +
      " || c.securityContext.appArmorProfile.type in ['RuntimeDefault', 'Localhost'])",
    js: (p) => {
      const ann = p.metadata.annotations ?? {};
      for (const k in ann) {
        if (!k.startsWith(APPARMOR_PREFIX)) continue;
        const v = ann[k] as string;
        if (v !== "runtime/default" && !v.startsWith("localhost/")) return false;
      }
      return (
        profileOk(p.spec.securityContext?.appArmorProfile) &&
        allContainers(p).every((c) => profileOk(c.securityContext?.appArmorProfile))
      );
    },
  },
  {
    name: "selinux",
    cel:
      `object.spec.?securityContext.?seLinuxOptions.?type.orValue('') in ${SELINUX_TYPES_CEL}` +
      " && !object.spec.?securityContext.?seLinuxOptions.?user.hasValue()" +
      " && !object.spec.?securityContext.?seLinuxOptions.?role.hasValue()" +
      ` && ${ALL}.all(c, c.?securityContext.?seLinuxOptions.?type.orValue('') in ${SELINUX_TYPES_CEL}` +
      " && !c.?securityContext.?seLinuxOptions.?user.hasValue() && !c.?securityContext.?seLinuxOptions.?role.hasValue())",
    bufbuild:
      `(!${podSc("seLinuxOptions")} || ((!has(object.spec.securityContext.seLinuxOptions.type)` +
      ` || object.spec.securityContext.seLinuxOptions.type in ${SELINUX_TYPES_CEL})` +
      " && !has(object.spec.securityContext.seLinuxOptions.user) && !has(object.spec.securityContext.seLinuxOptions.role)))" +
      ` && ${ALL_BUF}.all(c, !${cSc("seLinuxOptions")} || ((!has(c.securityContext.seLinuxOptions.type)` +
      ` || c.securityContext.seLinuxOptions.type in ${SELINUX_TYPES_CEL})` +
      " && !has(c.securityContext.seLinuxOptions.user) && !has(c.securityContext.seLinuxOptions.role)))",
    js: (p) =>
      seLinuxOk(p.spec.securityContext?.seLinuxOptions) &&
      allContainers(p).every((c) => seLinuxOk(c.securityContext?.seLinuxOptions)),
  },
  {
    name: "proc-mount",
    cel: `${ALL}.all(c, c.?securityContext.?procMount.orValue('Default') == 'Default')`,
    bufbuild: `${ALL_BUF}.all(c, !${cSc("procMount")} || c.securityContext.procMount == 'Default')`,
    js: (p) => allContainers(p).every((c) => (c.securityContext?.procMount ?? "Default") === "Default"),
  },
  {
    name: "seccomp-baseline",
    cel:
      "object.spec.?securityContext.?seccompProfile.?type.orValue('') != 'Unconfined'" +
      ` && ${ALL}.all(c, c.?securityContext.?seccompProfile.?type.orValue('') != 'Unconfined')`,
    bufbuild:
      `!(${podSc("seccompProfile")} && object.spec.securityContext.seccompProfile.type == 'Unconfined')` +
      ` && ${ALL_BUF}.all(c, !(${cSc("seccompProfile")} && c.securityContext.seccompProfile.type == 'Unconfined'))`,
    js: (p) =>
      p.spec.securityContext?.seccompProfile?.type !== "Unconfined" &&
      allContainers(p).every((c) => c.securityContext?.seccompProfile?.type !== "Unconfined"),
  },
  {
    name: "sysctls",
    cel: `object.spec.?securityContext.?sysctls.orValue([]).all(s, s.name in ${SAFE_SYSCTLS_CEL})`,
    bufbuild: `!${podSc("sysctls")} || object.spec.securityContext.sysctls.all(s, s.name in ${SAFE_SYSCTLS_CEL})`,
    js: (p) => (p.spec.securityContext?.sysctls ?? []).every((s) => SAFE_SYSCTLS.includes(s.name)),
  },
  {
    name: "volume-types",
    cel: `object.spec.?volumes.orValue([]).all(v, ${RESTRICTED_VOLUMES.map((t) => `has(v.${t})`).join(" || ")})`,
    bufbuild: `!has(object.spec.volumes) || object.spec.volumes.all(v, ${RESTRICTED_VOLUMES.map((t) => `has(v.${t})`).join(" || ")})`,
    js: (p) => (p.spec.volumes ?? []).every((v) => RESTRICTED_VOLUMES.some((t) => Object.hasOwn(v, t))),
  },
  {
    name: "allow-privilege-escalation",
    cel: `${ALL}.all(c, c.?securityContext.?allowPrivilegeEscalation.orValue(true) == false)`,
    bufbuild: `${ALL_BUF}.all(c, ${cSc("allowPrivilegeEscalation")} && c.securityContext.allowPrivilegeEscalation == false)`,
    js: (p) => allContainers(p).every((c) => c.securityContext?.allowPrivilegeEscalation === false),
  },
  {
    name: "run-as-non-root",
    cel: `${ALL}.all(c, c.?securityContext.?runAsNonRoot.orValue(object.spec.?securityContext.?runAsNonRoot.orValue(false)))`,
    bufbuild:
      `${ALL_BUF}.all(c, ${cSc("runAsNonRoot")} ? c.securityContext.runAsNonRoot` +
      ` : (${podSc("runAsNonRoot")} && object.spec.securityContext.runAsNonRoot))`,
    js: (p) => {
      const podLevel = p.spec.securityContext?.runAsNonRoot ?? false;
      return allContainers(p).every((c) => c.securityContext?.runAsNonRoot ?? podLevel);
    },
  },
  {
    name: "run-as-user",
    cel:
      "object.spec.?securityContext.?runAsUser.orValue(1) != 0" +
      ` && ${ALL}.all(c, c.?securityContext.?runAsUser.orValue(1) != 0)`,
    bufbuild:
      `!(${podSc("runAsUser")} && object.spec.securityContext.runAsUser == 0)` +
      ` && ${ALL_BUF}.all(c, !(${cSc("runAsUser")} && c.securityContext.runAsUser == 0))`,
    js: (p) =>
      p.spec.securityContext?.runAsUser !== 0 &&
      allContainers(p).every((c) => c.securityContext?.runAsUser !== 0),
  },
  {
    name: "seccomp-restricted",
    cel:
      `${ALL}.all(c, c.?securityContext.?seccompProfile.?type.orValue(` +
      "object.spec.?securityContext.?seccompProfile.?type.orValue('')) in ['RuntimeDefault', 'Localhost'])",
    bufbuild:
      `${ALL_BUF}.all(c, (${cSc("seccompProfile")} ? c.securityContext.seccompProfile.type` +
      ` : (${podSc("seccompProfile")} ? object.spec.securityContext.seccompProfile.type : ''))` +
      " in ['RuntimeDefault', 'Localhost'])",
    js: (p) => {
      const podType = p.spec.securityContext?.seccompProfile?.type ?? "";
      return allContainers(p).every((c) => {
        const t = c.securityContext?.seccompProfile?.type ?? podType;
        return t === "RuntimeDefault" || t === "Localhost";
      });
    },
  },
  {
    name: "capabilities-restricted",
    cel:
      `${ALL}.all(c, 'ALL' in c.?securityContext.?capabilities.?drop.orValue([])` +
      " && c.?securityContext.?capabilities.?add.orValue([]).all(cap, cap == 'NET_BIND_SERVICE'))",
    bufbuild:
      `${ALL_BUF}.all(c, ${cSc("capabilities")} && has(c.securityContext.capabilities.drop)` +
      " && 'ALL' in c.securityContext.capabilities.drop && (!has(c.securityContext.capabilities.add)" +
      " || c.securityContext.capabilities.add.all(cap, cap == 'NET_BIND_SERVICE')))",
    js: (p) =>
      allContainers(p).every((c) => {
        const caps = c.securityContext?.capabilities;
        return (
          (caps?.drop ?? []).includes("ALL") && (caps?.add ?? []).every((cap) => cap === "NET_BIND_SERVICE")
        );
      }),
  },
  {
    name: "image-tag",
    cel: `${ALL}.all(c, c.image.contains('@sha256:') || (c.image.matches('${TAG_PATTERN}') && !c.image.endsWith(':latest')))`,
    bufbuild: `${ALL_BUF}.all(c, c.image.contains('@sha256:') || (c.image.matches('${TAG_PATTERN}') && !c.image.endsWith(':latest')))`,
    js: (p) =>
      allContainers(p).every(
        (c) => c.image.includes("@sha256:") || (TAG_RE.test(c.image) && !c.image.endsWith(":latest")),
      ),
  },
  {
    name: "container-name",
    cel: `${ALL}.all(c, size(c.name) <= 63 && c.name.matches('${DNS_LABEL_PATTERN}'))`,
    bufbuild: `${ALL_BUF}.all(c, size(c.name) <= 63 && c.name.matches('${DNS_LABEL_PATTERN}'))`,
    js: (p) => allContainers(p).every((c) => c.name.length <= 63 && DNS_LABEL_RE.test(c.name)),
  },
  {
    name: "resource-limits",
    cel: "object.spec.containers.all(c, ['cpu', 'memory'].all(r, r in c.?resources.?limits.orValue({})))",
    bufbuild:
      "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits)" +
      " && ['cpu', 'memory'].all(r, r in c.resources.limits))",
    js: (p) =>
      p.spec.containers.every((c) => {
        const l = c.resources?.limits;
        return l !== undefined && Object.hasOwn(l, "cpu") && Object.hasOwn(l, "memory");
      }),
  },
  {
    name: "no-secret-env",
    cel: `${ALL}.all(c, c.?env.orValue([]).all(e, !e.?valueFrom.?secretKeyRef.hasValue()))`,
    bufbuild: `${ALL_BUF}.all(c, !has(c.env) || c.env.all(e, !has(e.valueFrom) || !has(e.valueFrom.secretKeyRef)))`,
    js: (p) =>
      allContainers(p).every((c) => (c.env ?? []).every((e) => e.valueFrom?.secretKeyRef === undefined)),
  },
];
