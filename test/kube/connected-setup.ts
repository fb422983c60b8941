/**
 * What the connected-path tests (connected.test.ts, audit.test.ts) share: a ServiceAccount-like user
 * on the real API server holding exactly the RBAC `celgate manifests --rbac` prints, a kubeconfig
 * for it, manifests applied from YAML text, and the two verdicts compared: the API server's own for
 * a dry-run create (the policies installed natively) and celgate's AdmissionReview reply.
 */
import { parseAllDocuments } from "yaml";
import type { TestCertificate } from "../helpers/certs.ts";
import type { ControlPlane } from "../helpers/kube-control-plane.ts";
import { createObject, type KubeManifest, type Resources } from "../helpers/kube-objects.ts";
import { cli } from "../unit/cli/fake-io.ts";

/** A kubeconfig for the control plane that authenticates as `user` (its client certificate). */
export function userKubeconfig(plane: ControlPlane, user: TestCertificate): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: test",
    `    cluster: { server: "${plane.url}", certificate-authority-data: "${b64(plane.ca)}" }`,
    "users:",
    "  - name: user",
    `    user: { client-certificate-data: "${b64(user.cert)}", client-key-data: "${b64(user.key)}" }`,
    "contexts:",
    "  - name: test",
    "    context: { cluster: test, user: user }",
    "current-context: test",
    "",
  ].join("\n");
}

/** Every document of `yaml` that is an object, in order. */
export function manifestsOf(yaml: string): KubeManifest[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as unknown)
    .filter((d): d is KubeManifest => d !== null && typeof d === "object");
}

/** Creates every object of `yaml` for real, as the admin; fails on any refusal. */
export async function apply(plane: ControlPlane, resources: Resources, yaml: string): Promise<void> {
  for (const m of manifestsOf(yaml)) {
    const r = await createObject(plane, resources, m, { dryRun: false });
    if (!r.served) throw new Error(`${String(m.apiVersion)} ${String(m.kind)} is not served`);
    if (r.status !== 201)
      throw new Error(
        `create ${String(m.kind)} ${String(m.metadata?.name)}: ${r.status} ${JSON.stringify(r.body)}`,
      );
  }
}

/**
 * The user `serve` runs as in a pod: `system:serviceaccount:NS:NAME` in the ServiceAccount groups,
 * bound to what `celgate manifests --rbac` prints for `args` (and nothing else), and a kubeconfig
 * for it.
 */
export async function serviceAccountUser(
  plane: ControlPlane,
  resources: Resources,
  namespace: string,
  name: string,
  args: readonly string[],
): Promise<{ user: TestCertificate; kubeconfig: string; rbac: string }> {
  const printed = await cli(["manifests", "--rbac", "--service", name, "--namespace", namespace, ...args]);
  if (printed.code !== 0) throw new Error(`manifests --rbac: ${printed.stderr}`);
  await apply(plane, resources, printed.stdout);
  const user = plane.issueUser(`system:serviceaccount:${namespace}:${name}`, "system:serviceaccounts");
  return { user, kubeconfig: userKubeconfig(plane, user), rbac: printed.stdout };
}

/** A verdict as both sides give it: allowed, for a refusal the HTTP code and the message, and the warnings (sorted). */
export interface Verdict {
  readonly allowed: boolean;
  readonly code?: number;
  readonly message?: string;
  readonly warnings: readonly string[];
}

/**
 * What admission.NewForbidden (k8s.io/apiserver/pkg/admission/errors.go) puts before a native
 * policy's denial: `<resource>[.<group>] "<name>" is forbidden: `. A webhook's reply carries only
 * what follows (the API server words a webhook's denial `admission webhook "w" denied the request:
 * ...` around it), so it is taken off to compare.
 */
const FORBIDDEN_PREFIX = /^[a-z0-9.-]+ "[^"]*" is forbidden: /;

/**
 * The API server's verdict on creating `object` at `collection` with `?dryRun=All`, as `as` or the
 * admin; a denial's message without FORBIDDEN_PREFIX.
 */
export async function nativeVerdict(
  plane: ControlPlane,
  collection: string,
  object: unknown,
  as?: TestCertificate,
): Promise<Verdict> {
  const r = await plane.request("POST", `${collection}?dryRun=All`, object, as);
  const warnings = [...r.warnings].sort();
  if (r.status === 201 || r.status === 200) return { allowed: true, warnings };
  const body = r.body as { code?: number; message?: string };
  const message = body.message ?? JSON.stringify(r.body);
  return { allowed: false, code: r.status, message: message.replace(FORBIDDEN_PREFIX, ""), warnings };
}

/** celgate's verdict from an AdmissionReview response. */
export function celgateVerdict(response: {
  readonly allowed: boolean;
  readonly status?: { readonly code?: number; readonly message?: string };
  readonly warnings?: readonly string[];
}): Verdict {
  // The API server relays a webhook's warnings through its warning recorder, which drops a text
  // already recorded (endpoints/filters/warning.go AddWarning): compared as it would relay them.
  const warnings = [...new Set(response.warnings ?? [])].sort();
  if (response.allowed) return { allowed: true, warnings };
  return {
    allowed: false,
    ...(response.status?.code !== undefined ? { code: response.status.code } : {}),
    ...(response.status?.message !== undefined ? { message: response.status.message } : {}),
    warnings,
  };
}

/** A Deployment of `replicas` in `namespace`. */
export function deploymentIn(namespace: string, name: string, replicas: number): Record<string, unknown> {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: `registry.example.com/${name}:1.0` }] },
      },
    },
  };
}

/** The AdmissionReview the API server would send a webhook for creating `object` as `user`. */
export function createReview(
  object: Record<string, unknown>,
  user: { readonly username: string; readonly groups: readonly string[] },
): Record<string, unknown> {
  const metadata = object.metadata as { name: string; namespace: string };
  const gvk = { group: "apps", version: "v1", kind: "Deployment" };
  const gvr = { group: "apps", version: "v1", resource: "deployments" };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: crypto.randomUUID(),
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: metadata.name,
      namespace: metadata.namespace,
      operation: "CREATE",
      userInfo: { username: user.username, groups: [...user.groups] },
      object,
      oldObject: null,
      dryRun: true,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions", dryRun: ["All"] },
    },
  };
}
