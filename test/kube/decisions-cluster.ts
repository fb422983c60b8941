/**
 * The real API server's side of the Decisions differential test: installing a suite's objects
 * natively, knowing when a change of policies or bindings is in effect, putting the cluster in the
 * state a case needs (its namespace's labels and phase, the stored object of an UPDATE or DELETE),
 * and sending the case's request as its user.
 *
 * When is a change in effect? The API server's policy plugins read policies and bindings through
 * informers (k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_source.go), which see the
 * events of one resource in the order they happened. So after a change the test creates a new
 * sentinel ValidatingAdmissionPolicy and MutatingAdmissionPolicy with their bindings, each naming
 * the round (`sync-<n>`), and dry-runs a ConfigMap they select until the answer carries both marks
 * (the mutating one sets a value the validating one's message renders): then every earlier policy
 * and binding event has been seen too. Namespace and parameter informers are not covered: a case
 * that differs is sent again after a pause, a bounded number of times, before it counts.
 */
import type { AdmissionRequest } from "../../src/request/types.ts";
import type { JsonObject } from "../../src/suite/types.ts";
import type { ControlPlane } from "../helpers/kube-control-plane.ts";
import { deleteObject, type KubeManifest, Resources, waitFor } from "../helpers/kube-objects.ts";
import { type Answer, ImpersonatingClient } from "./decisions-client.ts";
import type { DecisionCase } from "./decisions-inputs.ts";

const SYNC_NAMESPACE = "celgate-sync";
const SYNC_WAIT_MS = 30_000;
const ADMISSION = "admissionregistration.k8s.io/v1";
const WRITER_ROLE = "celgate-decisions-writer";

export interface NamespaceState {
  readonly name: string;
  readonly labels: JsonObject;
  readonly annotations: JsonObject;
  readonly terminating: boolean;
}

/** What cases need stored before they are sent: namespaces as they must be, and stored objects. */
export interface CaseState {
  readonly namespaces: readonly NamespaceState[];
  readonly seeds: readonly JsonObject[];
}

export function identity(o: JsonObject): string {
  const m = metadataOf(o);
  return `${String(o.apiVersion)}/${String(o.kind)}/${String(m.namespace ?? "")}/${String(m.name)}`;
}

/** `a` and `b` together, or undefined when they need one namespace or object in two states. */
export function mergeStates(a: CaseState, b: CaseState): CaseState | undefined {
  const namespaces = new Map(a.namespaces.map((n) => [n.name, n]));
  for (const n of b.namespaces) {
    const there = namespaces.get(n.name);
    if (there !== undefined && JSON.stringify(there) !== JSON.stringify(n)) return undefined;
    namespaces.set(n.name, n);
  }
  const seeds = new Map(a.seeds.map((o) => [identity(o), o]));
  for (const o of b.seeds) {
    const there = seeds.get(identity(o));
    if (there !== undefined && JSON.stringify(there) !== JSON.stringify(o)) return undefined;
    seeds.set(identity(o), o);
  }
  return { namespaces: [...namespaces.values()], seeds: [...seeds.values()] };
}

function metadataOf(o: JsonObject | undefined): JsonObject {
  return (o?.metadata ?? {}) as JsonObject;
}

function nameOf(m: KubeManifest): string {
  return String(m.metadata?.name ?? "");
}

function sentinels(n: number): KubeManifest[] {
  const select = { matchLabels: { "celgate-sync": String(n) } };
  const rules = [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }];
  const name = `celgate-sync-${n}`;
  return [
    {
      apiVersion: ADMISSION,
      kind: "MutatingAdmissionPolicy",
      metadata: { name },
      spec: {
        matchConstraints: { resourceRules: rules, objectSelector: select },
        failurePolicy: "Fail",
        reinvocationPolicy: "Never",
        mutations: [
          {
            patchType: "ApplyConfiguration",
            applyConfiguration: { expression: `Object{data: {'sync': '${n}'}}` },
          },
        ],
      },
    },
    {
      apiVersion: ADMISSION,
      kind: "MutatingAdmissionPolicyBinding",
      metadata: { name },
      spec: { policyName: name },
    },
    {
      apiVersion: ADMISSION,
      kind: "ValidatingAdmissionPolicy",
      metadata: { name },
      spec: {
        matchConstraints: { resourceRules: rules, objectSelector: select },
        failurePolicy: "Fail",
        validations: [
          { expression: "false", messageExpression: `'sync-${n} m=' + object.?data['sync'].orValue('none')` },
        ],
      },
    },
    {
      apiVersion: ADMISSION,
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name },
      spec: { policyName: name, validationActions: ["Deny"] },
    },
  ];
}

/** The path of a request's object (or collection, for a CREATE without subresource). */
export function requestPath(request: AdmissionRequest): string {
  const { group, version, resource } = request.resource;
  const prefix = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  const ns = request.namespace !== "" && resource !== "namespaces" ? `/namespaces/${request.namespace}` : "";
  const collection = `${prefix}${ns}/${resource}`;
  if (request.operation === "CREATE" && request.subResource === undefined) return collection;
  const named = `${collection}/${encodeURIComponent(request.name)}`;
  return request.subResource === undefined ? named : `${named}/${request.subResource}`;
}

/**
 * What a case needs stored, or why it cannot be reproduced: the namespace as the case's
 * namespaceObject describes it (plain when it gives none), and the object an UPDATE changes or a
 * DELETE deletes (for a subresource, its parent).
 */
export function caseState(c: DecisionCase): CaseState | string {
  const r = c.request;
  const seeds: JsonObject[] = [];
  const stored = r.operation === "DELETE" ? c.object : c.oldObject;
  if (r.operation === "UPDATE" || r.operation === "DELETE") {
    if (r.subResource === undefined || r.subResource === "ephemeralcontainers") {
      if (stored === undefined) return "no stored object";
      if (stored.kind !== "Namespace") seeds.push(stored);
    } else if (r.subResource === "scale" && r.resource.resource === "deployments") {
      const replicas = ((stored?.spec ?? {}) as JsonObject).replicas ?? 1;
      const labels = { app: r.name };
      seeds.push({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: r.name, namespace: r.namespace },
        spec: {
          replicas,
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } },
        },
      });
    } else return `${r.operation} of the ${r.subResource} subresource of ${r.resource.resource}`;
  }
  if (r.operation === "CREATE" && r.subResource === "eviction")
    seeds.push({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: r.name, namespace: r.namespace },
      spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
    });
  const nsName =
    r.resource.resource === "namespaces" && r.resource.group === ""
      ? undefined
      : r.namespace === ""
        ? undefined
        : r.namespace;
  if (nsName === undefined) {
    // A Namespace as the object: the stored one is the old object (an UPDATE or DELETE of it).
    if (r.resource.resource === "namespaces" && stored !== undefined) {
      const m = metadataOf(stored);
      return {
        namespaces: [
          {
            name: String(m.name),
            labels: (m.labels ?? {}) as JsonObject,
            annotations: (m.annotations ?? {}) as JsonObject,
            terminating: false,
          },
        ],
        seeds,
      };
    }
    return { namespaces: [], seeds };
  }
  const m = metadataOf(c.namespaceObject);
  const phase = ((c.namespaceObject?.status ?? {}) as JsonObject).phase;
  return {
    namespaces: [
      {
        name: nsName,
        labels: (m.labels ?? {}) as JsonObject,
        annotations: (m.annotations ?? {}) as JsonObject,
        terminating: phase === "Terminating",
      },
    ],
    seeds,
  };
}

/** One control plane, prepared for the Decisions test, and what it has stored so far. */
export class DecisionCluster {
  readonly client: ImpersonatingClient;
  readonly resources: Resources;
  private round = 0;
  private seeded: JsonObject[] = [];

  constructor(private readonly plane: ControlPlane) {
    this.client = new ImpersonatingClient(plane);
    this.resources = new Resources(plane);
  }

  /** Every user may read and write everything (so a request reaches admission), no custom verbs. */
  async prepare(): Promise<void> {
    await this.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: SYNC_NAMESPACE } });
    await this.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: WRITER_ROLE },
      rules: [
        {
          apiGroups: ["*"],
          resources: ["*", "*/*"],
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
        },
      ],
    });
    await this.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: WRITER_ROLE },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: WRITER_ROLE },
      subjects: [{ kind: "Group", name: "system:authenticated", apiGroup: "rbac.authorization.k8s.io" }],
    });
  }

  /** Creates `m` for real as the admin, or replaces what is there; fails on any other answer. */
  async apply(m: KubeManifest): Promise<void> {
    const where = await this.resources.of(m);
    if (where === undefined) throw new Error(`${String(m.apiVersion)} ${String(m.kind)} is not served`);
    const created = await this.client.send("POST", where.collection, m);
    if (created.status === 201) return;
    if (created.status !== 409)
      throw new Error(`create ${String(m.kind)}: ${created.status} ${JSON.stringify(created.body)}`);
    const path = `${where.collection}/${encodeURIComponent(String(m.metadata?.name))}`;
    const current = await this.client.send("GET", path);
    const rv = metadataOf(current.body as JsonObject).resourceVersion;
    const replaced = await this.client.send("PUT", path, {
      ...m,
      metadata: { ...m.metadata, resourceVersion: rv },
    });
    if (replaced.status !== 200)
      throw new Error(`replace ${String(m.kind)}: ${replaced.status} ${JSON.stringify(replaced.body)}`);
  }

  async remove(m: KubeManifest): Promise<void> {
    await deleteObject(this.plane, this.resources, m);
  }

  /**
   * Waits until every policy and binding change made so far is in effect (see the file comment).
   * `inEffect` may accept an answer too: a suite policy that matches every ConfigMap and denies it
   * (always-deny) answers before the sentinel, and shows the suite's binding is in effect.
   */
  async sync(inEffect: (message: string) => boolean = () => false): Promise<void> {
    const n = ++this.round;
    for (const m of sentinels(n)) await this.apply(m);
    const mark = `sync-${n} m=${n}`;
    const probe = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "probe", namespace: SYNC_NAMESPACE, labels: { "celgate-sync": String(n) } },
    };
    await waitFor(
      `the policies of round ${n} in effect`,
      async () => {
        const r = await this.client.send(
          "POST",
          `/api/v1/namespaces/${SYNC_NAMESPACE}/configmaps?dryRun=All`,
          probe,
        );
        return String((r.body as { message?: unknown }).message ?? "");
      },
      (message) => message.includes(mark) || inEffect(message),
      SYNC_WAIT_MS,
    );
    // The last round's sentinels go without waiting: a later round's marks do not depend on them.
    if (n > 1)
      for (const m of sentinels(n - 1)) {
        const where = await this.resources.of(m);
        if (where) await this.client.send("DELETE", `${where.collection}/${nameOf(m)}`);
      }
  }

  /**
   * Puts the namespaces and stored objects cases need in place. What the real server cannot hold
   * is returned, keyed `namespace:<name>` or by the object's identity, with why: the cases that
   * need it are then not reproduced, and say why.
   */
  async establish(state: CaseState): Promise<Map<string, string>> {
    for (const s of this.seeded.reverse()) await this.remove(s);
    this.seeded = [];
    const problems = new Map<string, string>();
    for (const n of state.namespaces)
      if (!(await this.namespace(n)))
        problems.set(`namespace:${n.name}`, `namespace ${n.name} is Terminating from an earlier case`);
    for (const s of state.seeds) {
      await this.remove(s);
      try {
        await this.seed(s);
        this.seeded.push(s);
      } catch (e) {
        problems.set(identity(s), `the stored object cannot be created: ${(e as Error).message}`);
      }
    }
    return problems;
  }

  /** A Pod's ephemeral containers cannot be set on create, only through their subresource. */
  private async seed(s: JsonObject): Promise<void> {
    const spec = (s.spec ?? {}) as JsonObject;
    if (s.kind !== "Pod" || spec.ephemeralContainers === undefined) return this.apply(s);
    const { ephemeralContainers: _later, ...rest } = spec;
    await this.apply({ ...s, spec: rest });
    const m = metadataOf(s);
    const path = `/api/v1/namespaces/${String(m.namespace)}/pods/${String(m.name)}`;
    const current = await this.client.send("GET", path);
    const rv = metadataOf(current.body as JsonObject).resourceVersion;
    const r = await this.client.send("PUT", `${path}/ephemeralcontainers`, {
      ...(current.body as JsonObject),
      metadata: { ...metadataOf(current.body as JsonObject), resourceVersion: rv },
      spec: {
        ...((current.body as JsonObject).spec as JsonObject),
        ephemeralContainers: spec.ephemeralContainers,
      },
    });
    if (r.status !== 200) throw new Error(`ephemeral containers: ${r.status} ${JSON.stringify(r.body)}`);
  }

  /** Removes what `establish` stored. */
  async clear(): Promise<void> {
    await this.establish({ namespaces: [], seeds: [] });
  }

  private async namespace(want: NamespaceState): Promise<boolean> {
    const path = `/api/v1/namespaces/${want.name}`;
    const current = await this.client.send("GET", path);
    const body = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: want.name, labels: want.labels, annotations: want.annotations },
    };
    if (current.status === 404) {
      const r = await this.client.send("POST", "/api/v1/namespaces", body);
      if (r.status !== 201)
        throw new Error(`create namespace ${want.name}: ${r.status} ${JSON.stringify(r.body)}`);
    } else {
      const terminating =
        ((current.body as JsonObject).status as JsonObject | undefined)?.phase === "Terminating";
      // Nothing runs the namespace controller, so a Terminating namespace stays so.
      if (terminating && !want.terminating) return false;
      const rv = metadataOf(current.body as JsonObject).resourceVersion;
      const r = await this.client.send("PUT", path, {
        ...body,
        metadata: { ...body.metadata, resourceVersion: rv },
      });
      if (r.status !== 200)
        throw new Error(`update namespace ${want.name}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    if (want.terminating) {
      const r = await this.client.send("DELETE", path);
      if (r.status !== 200 && r.status !== 202 && r.status !== 409)
        throw new Error(`terminate namespace ${want.name}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    return true;
  }

  /** Sends the case's request as its user, with server-side dry run (a CONNECT cannot be dry-run). */
  send(c: DecisionCase): Promise<Answer> {
    const r = c.request;
    const path = requestPath(r);
    const user = r.userInfo;
    switch (r.operation) {
      case "CREATE":
        return this.client.send("POST", `${path}?dryRun=All`, c.object, user);
      case "UPDATE":
        return this.client.send("PUT", `${path}?dryRun=All`, c.object, user);
      case "DELETE":
        return this.client.send(
          "DELETE",
          `${path}?dryRun=All`,
          { apiVersion: "v1", kind: "DeleteOptions", dryRun: ["All"] },
          user,
        );
      case "CONNECT":
        return this.client.send("POST", `${path}?${connectQuery(r.options)}`, undefined, user);
    }
  }

  close(): void {
    this.client.close();
  }
}

/** A CONNECT's options (PodExecOptions and the like) as the query string they are sent in. */
function connectQuery(options: AdmissionRequest["options"]): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(options ?? {})) {
    if (k === "apiVersion" || k === "kind") continue;
    for (const x of Array.isArray(v) ? v : [v]) q.append(k, String(x));
  }
  return q.toString();
}
