import assert from "node:assert/strict";
import { test } from "node:test";
import type { AdmissionRequest, GroupVersionResource } from "../../../src/request/types.ts";
import { type MatchContext, matchesResources } from "../../../src/match/index.ts";
import { type IndexEntry, PolicyIndex } from "../../../src/match/policy-index.ts";
import type {
  MatchPolicyType,
  MatchResources,
  NamedRuleWithOperations,
  Operation,
  RuleOperation,
  ScopeType,
} from "../../../src/policy/types.ts";
import { seededRandom } from "../../helpers/random.ts";

// ---- builders --------------------------------------------------------------------------------

interface ReqSpec {
  gvr: GroupVersionResource;
  subResource?: string;
  op?: Operation;
  name?: string;
  namespace?: string;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
}

function request(s: ReqSpec): AdmissionRequest {
  return {
    uid: "uid-1",
    kind: { group: s.gvr.group, version: s.gvr.version, kind: "Thing" },
    resource: s.gvr,
    ...(s.subResource === undefined ? {} : { subResource: s.subResource }),
    ...(s.requestResource === undefined ? {} : { requestResource: s.requestResource }),
    ...(s.requestSubResource === undefined ? {} : { requestSubResource: s.requestSubResource }),
    name: s.name ?? "x",
    namespace: s.namespace ?? "default",
    operation: s.op ?? "CREATE",
    userInfo: { username: "alice", groups: ["system:authenticated"] },
    object: { metadata: { name: s.name ?? "x" } },
    oldObject: null,
    dryRun: false,
    options: null,
  };
}

const gvr = (group: string, version: string, resource: string): GroupVersionResource => ({
  group,
  version,
  resource,
});

const PODS = gvr("", "v1", "pods");
const CONFIGMAPS = gvr("", "v1", "configmaps");
const DEPLOYMENTS = gvr("apps", "v1", "deployments");
const LEGACY_DEPLOYMENTS = gvr("extensions", "v1beta1", "deployments");
const STATEFULSETS = gvr("apps", "v1", "statefulsets");
const REPLICASETS = gvr("apps", "v1", "replicasets");
const JOBS = gvr("batch", "v1", "jobs");

function rule(over: Partial<NamedRuleWithOperations> = {}): NamedRuleWithOperations {
  return {
    operations: ["*"],
    apiGroups: ["*"],
    apiVersions: ["*"],
    resources: ["*/*"],
    resourceNames: [],
    scope: "*",
    ...over,
  };
}

function mr(rules: NamedRuleWithOperations[], matchPolicy: MatchPolicyType = "Equivalent"): MatchResources {
  return { resourceRules: rules, excludeResourceRules: [], matchPolicy };
}

const core = (resources: string[], operations: RuleOperation[] = ["*"]) =>
  rule({ apiGroups: [""], apiVersions: ["v1"], resources, operations });

type Entry = IndexEntry<string>;

function entry(value: string, constraints: MatchResources | undefined, binding?: MatchResources): Entry {
  return { value, constraints, bindingResources: binding };
}

const ctx: MatchContext = { namespaceLabels: () => ({}) };

/** The entries the full matcher would evaluate further: what the index must never leave out. */
function selected<T>(entries: readonly IndexEntry<T>[], req: AdmissionRequest): T[] {
  return entries
    .filter(
      (e) =>
        e.constraints !== undefined &&
        matchesResources(e.constraints, req, ctx).status !== "not-matched" &&
        matchesResources(e.bindingResources, req, ctx).status !== "not-matched",
    )
    .map((e) => e.value);
}

// ---- unit cases --------------------------------------------------------------------------------

interface Case {
  readonly name: string;
  readonly entries: readonly Entry[];
  readonly req: AdmissionRequest;
  readonly want: readonly string[];
}

const cases: Case[] = [
  // exact
  {
    name: "exact rule selects its resource",
    entries: [entry("a", mr([core(["pods"])]))],
    req: request({ gvr: PODS }),
    want: ["a"],
  },
  {
    name: "exact rule skips another resource",
    entries: [entry("a", mr([core(["pods"])]))],
    req: request({ gvr: CONFIGMAPS }),
    want: [],
  },
  {
    name: "exact rule skips another group with the same resource name",
    entries: [entry("a", mr([core(["deployments"])]))],
    req: request({ gvr: DEPLOYMENTS }),
    want: [],
  },
  // `*` groups
  {
    name: "* group selects the resource in any group",
    entries: [entry("a", mr([rule({ resources: ["deployments"] })]))],
    req: request({ gvr: LEGACY_DEPLOYMENTS }),
    want: ["a"],
  },
  {
    name: "* group still needs the resource",
    entries: [entry("a", mr([rule({ resources: ["deployments"] })]))],
    req: request({ gvr: REPLICASETS }),
    want: [],
  },
  // `*` resources
  {
    name: "* resource selects every main resource of the group",
    entries: [entry("a", mr([rule({ apiGroups: ["apps"], resources: ["*"] })]))],
    req: request({ gvr: STATEFULSETS }),
    want: ["a"],
  },
  {
    name: "* resource selects no subresource",
    entries: [entry("a", mr([rule({ apiGroups: ["apps"], resources: ["*"] })]))],
    req: request({ gvr: DEPLOYMENTS, subResource: "scale" }),
    want: [],
  },
  {
    name: "* resource keeps to its group",
    entries: [entry("a", mr([rule({ apiGroups: ["apps"], resources: ["*"] })]))],
    req: request({ gvr: PODS }),
    want: [],
  },
  // pods/*
  {
    name: "pods/* selects pods itself",
    entries: [entry("a", mr([core(["pods/*"])]))],
    req: request({ gvr: PODS }),
    want: ["a"],
  },
  {
    name: "pods/* selects a pod subresource",
    entries: [entry("a", mr([core(["pods/*"])]))],
    req: request({ gvr: PODS, subResource: "ephemeralcontainers" }),
    want: ["a"],
  },
  {
    name: "pods/* skips other resources",
    entries: [entry("a", mr([core(["pods/*"])]))],
    req: request({ gvr: CONFIGMAPS }),
    want: [],
  },
  // */scale
  {
    name: "*/scale selects any resource's scale",
    entries: [entry("a", mr([rule({ resources: ["*/scale"] })]))],
    req: request({ gvr: STATEFULSETS, subResource: "scale", op: "UPDATE" }),
    want: ["a"],
  },
  {
    name: "*/scale skips the main resource",
    entries: [entry("a", mr([rule({ resources: ["*/scale"] })]))],
    req: request({ gvr: DEPLOYMENTS }),
    want: [],
  },
  {
    name: "*/scale skips another subresource",
    entries: [entry("a", mr([rule({ resources: ["*/scale"] })]))],
    req: request({ gvr: DEPLOYMENTS, subResource: "status" }),
    want: [],
  },
  // */*
  {
    name: "*/* selects a subresource of any group",
    entries: [entry("a", mr([rule({ resources: ["*/*"] })]))],
    req: request({ gvr: PODS, subResource: "log", op: "CONNECT" }),
    want: ["a"],
  },
  {
    name: "*/* selects a main resource",
    entries: [entry("a", mr([rule({ resources: ["*/*"] })]))],
    req: request({ gvr: JOBS }),
    want: ["a"],
  },
  // subresource vs none
  {
    name: "pods skips pods/status",
    entries: [entry("a", mr([core(["pods"])]))],
    req: request({ gvr: PODS, subResource: "status" }),
    want: [],
  },
  {
    name: "pods/status skips pods itself",
    entries: [entry("a", mr([core(["pods/status"])]))],
    req: request({ gvr: PODS }),
    want: [],
  },
  {
    name: "pods/status selects pods/status",
    entries: [entry("a", mr([core(["pods/status"])]))],
    req: request({ gvr: PODS, subResource: "status" }),
    want: ["a"],
  },
  {
    name: "pods/status skips pods/log",
    entries: [entry("a", mr([core(["pods/status"])]))],
    req: request({ gvr: PODS, subResource: "log" }),
    want: [],
  },
  {
    name: "only the first / separates the subresource",
    entries: [entry("a", mr([core(["pods/a/b"])]))],
    req: request({ gvr: PODS, subResource: "a/b" }),
    want: ["a"],
  },
  // operations
  {
    name: "operation * selects CONNECT",
    entries: [entry("a", mr([core(["pods/*"], ["*"])]))],
    req: request({ gvr: PODS, subResource: "exec", op: "CONNECT" }),
    want: ["a"],
  },
  {
    name: "operation list selects a listed operation",
    entries: [entry("a", mr([core(["pods"], ["CREATE", "UPDATE"])]))],
    req: request({ gvr: PODS, op: "UPDATE" }),
    want: ["a"],
  },
  {
    name: "operation list skips an unlisted operation",
    entries: [entry("a", mr([core(["pods"], ["CREATE", "UPDATE"])]))],
    req: request({ gvr: PODS, op: "DELETE" }),
    want: [],
  },
  {
    name: "no operations selects nothing",
    entries: [entry("a", mr([core(["pods"], [])]))],
    req: request({ gvr: PODS }),
    want: [],
  },
  // matchPolicy
  {
    name: "Equivalent is looked up under the requestResource",
    entries: [
      entry("a", mr([rule({ apiGroups: ["extensions"], resources: ["deployments"] })], "Equivalent")),
    ],
    req: request({ gvr: DEPLOYMENTS, requestResource: LEGACY_DEPLOYMENTS }),
    want: ["a"],
  },
  {
    name: "Exact is not looked up under the requestResource",
    entries: [entry("a", mr([rule({ apiGroups: ["extensions"], resources: ["deployments"] })], "Exact"))],
    req: request({ gvr: DEPLOYMENTS, requestResource: LEGACY_DEPLOYMENTS }),
    want: [],
  },
  {
    name: "Equivalent uses requestSubResource",
    entries: [entry("a", mr([rule({ apiGroups: ["extensions"], resources: ["deployments/scale"] })]))],
    req: request({
      gvr: gvr("autoscaling", "v1", "scales"),
      requestResource: LEGACY_DEPLOYMENTS,
      requestSubResource: "scale",
    }),
    want: ["a"],
  },
  {
    name: "Equivalent keeps the subresource when requestSubResource is absent",
    entries: [entry("a", mr([rule({ apiGroups: ["extensions"], resources: ["deployments/scale"] })]))],
    req: request({ gvr: DEPLOYMENTS, subResource: "scale", requestResource: LEGACY_DEPLOYMENTS }),
    want: ["a"],
  },
  {
    name: "Exact is still looked up under its own resource",
    entries: [entry("a", mr([rule({ apiGroups: ["apps"], resources: ["deployments"] })], "Exact"))],
    req: request({ gvr: DEPLOYMENTS, requestResource: LEGACY_DEPLOYMENTS }),
    want: ["a"],
  },
  // binding resources
  {
    name: "a narrower binding prunes a broad policy",
    entries: [entry("a", mr([rule()]), mr([core(["pods"])]))],
    req: request({ gvr: CONFIGMAPS }),
    want: [],
  },
  {
    name: "a narrower binding keeps what it selects",
    entries: [entry("a", mr([rule()]), mr([core(["pods"])]))],
    req: request({ gvr: PODS }),
    want: ["a"],
  },
  {
    name: "a broader binding does not widen a narrow policy",
    entries: [entry("a", mr([core(["pods"])]), mr([rule()]))],
    req: request({ gvr: CONFIGMAPS }),
    want: [],
  },
  {
    name: "a binding with empty resourceRules leaves the policy's rules in charge",
    entries: [entry("a", mr([core(["pods"])]), mr([]))],
    req: request({ gvr: PODS }),
    want: ["a"],
  },
  {
    name: "policy matching the resource and binding the requestResource is kept",
    entries: [
      entry(
        "a",
        mr([rule({ resources: ["deployments"] })], "Exact"),
        mr([rule({ apiGroups: ["extensions"], resources: ["deployments"] })], "Equivalent"),
      ),
    ],
    req: request({ gvr: DEPLOYMENTS, requestResource: LEGACY_DEPLOYMENTS }),
    want: ["a"],
  },
  {
    name: "policy matching the requestResource and binding the resource is kept",
    entries: [
      entry(
        "a",
        mr([rule({ apiGroups: ["extensions"], resources: ["deployments"] })], "Equivalent"),
        mr([rule({ apiGroups: ["apps"], resources: ["deployments"] })], "Exact"),
      ),
    ],
    req: request({ gvr: DEPLOYMENTS, requestResource: LEGACY_DEPLOYMENTS }),
    want: ["a"],
  },
  {
    name: "a binding whose rules select nothing drops the entry",
    entries: [entry("a", mr([rule()]), mr([core(["pods"], [])]))],
    req: request({ gvr: PODS }),
    want: [],
  },
  // constraints
  {
    name: "no constraints never matches",
    entries: [entry("a", undefined)],
    req: request({ gvr: PODS }),
    want: [],
  },
  {
    name: "no constraints never matches, even with a binding",
    entries: [entry("a", undefined, mr([core(["pods"])]))],
    req: request({ gvr: PODS }),
    want: [],
  },
  {
    name: "constraints with empty resourceRules select everything, as the matcher does",
    entries: [entry("a", mr([]))],
    req: request({ gvr: JOBS, subResource: "status", op: "DELETE" }),
    want: ["a"],
  },
  {
    name: "empty constraint rules with a binding are filed under the binding",
    entries: [entry("a", mr([]), mr([core(["pods"])]))],
    req: request({ gvr: JOBS }),
    want: [],
  },
  // what the index deliberately leaves to the matcher
  {
    name: "version, scope and resourceNames are not indexed",
    entries: [
      entry("version", mr([rule({ apiGroups: [""], apiVersions: ["v2"], resources: ["pods"] })])),
      entry("scope", mr([rule({ apiGroups: [""], resources: ["pods"], scope: "Cluster" })])),
      entry("names", mr([rule({ apiGroups: [""], resources: ["pods"], resourceNames: ["other"] })])),
    ],
    req: request({ gvr: PODS }),
    want: ["version", "scope", "names"],
  },
  {
    name: "excludeResourceRules are ignored",
    entries: [entry("a", { ...mr([core(["pods"])]), excludeResourceRules: [core(["pods"])] })],
    req: request({ gvr: PODS }),
    want: ["a"],
  },
  // order and duplicates
  {
    name: "order is entry order across wildcard and exact buckets",
    entries: [
      entry("exact-other", mr([core(["configmaps"])])),
      entry("everything", mr([rule()])),
      entry("exact", mr([core(["pods"], ["CREATE"])])),
      entry("any-group", mr([rule({ resources: ["pods"] })])),
      entry("always", mr([])),
      entry("any-resource", mr([rule({ apiGroups: [""], resources: ["*"] })])),
      entry("pods-sub", mr([core(["pods/*"])])),
      entry("wrong-op", mr([core(["pods"], ["DELETE"])])),
      entry("legacy", mr([rule({ apiGroups: ["extensions"], resources: ["pods"] })])),
      entry("last-exact", mr([core(["pods"])])),
    ],
    req: request({ gvr: PODS, requestResource: gvr("extensions", "v1beta1", "pods") }),
    want: ["everything", "exact", "any-group", "always", "any-resource", "pods-sub", "legacy", "last-exact"],
  },
  {
    name: "an entry selected by several rules and both sides appears once",
    entries: [
      entry(
        "a",
        mr([core(["pods", "pods/*"], ["CREATE", "*"]), rule(), rule({ resources: ["pods"] })]),
        mr([rule()]),
      ),
      entry("b", mr([rule({ apiGroups: ["", "*"], resources: ["*", "pods"] })])),
    ],
    req: request({ gvr: PODS, requestResource: gvr("", "v1beta1", "pods") }),
    want: ["a", "b"],
  },
];

for (const c of cases) {
  void test(`policy index: ${c.name}`, () => {
    const index = new PolicyIndex(c.entries);
    const got = index.candidates(c.req);
    assert.deepEqual([...got], c.want);
    for (const value of selected(c.entries, c.req)) {
      assert.ok(got.includes(value), `the matcher selects ${value} but the index left it out`);
    }
  });
}

void test("policy index: size counts the entries that can ever match", () => {
  const index = new PolicyIndex([
    entry("a", mr([core(["pods"])])),
    entry("none", undefined),
    entry("dead", mr([core(["pods"], [])])),
    entry("b", mr([])),
  ]);
  assert.equal(index.size, 2);
  assert.equal(new PolicyIndex<string>([]).size, 0);
});

void test("policy index: nothing to return gives one shared frozen empty array", () => {
  const index = new PolicyIndex([entry("a", mr([core(["pods"])]))]);
  const first = index.candidates(request({ gvr: JOBS }));
  const second = index.candidates(request({ gvr: CONFIGMAPS }));
  assert.equal(first.length, 0);
  assert.equal(first, second);
  assert.ok(Object.isFrozen(first));
  assert.equal(new PolicyIndex<string>([]).candidates(request({ gvr: PODS })), first);
});

void test("policy index: results of one call are not changed by the next", () => {
  const index = new PolicyIndex([entry("a", mr([core(["pods"])])), entry("b", mr([core(["configmaps"])]))]);
  const pods = index.candidates(request({ gvr: PODS }));
  index.candidates(request({ gvr: CONFIGMAPS }));
  assert.deepEqual([...pods], ["a"]);
});

void test("policy index: an operation outside the four is only selected by *", () => {
  const index = new PolicyIndex([
    entry("star", mr([core(["pods"], ["*"])])),
    entry("create", mr([core(["pods"], ["CREATE"])])),
  ]);
  const odd = { ...request({ gvr: PODS }), operation: "PATCH" } as unknown as AdmissionRequest;
  assert.deepEqual([...index.candidates(odd)], ["star"]);
});

// ---- property test ----------------------------------------------------------------------------

const prng = seededRandom;

const GROUPS = ["", "apps", "batch", "extensions", "policy"];
const VERSIONS = ["v1", "v1beta1", "v2"];
const RESOURCES = ["pods", "deployments", "jobs", "configmaps", "namespaces", "scales", "replicasets"];
const SUBRESOURCES = ["status", "scale", "log", "exec"];
const OPS: readonly Operation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];
const SCOPES: readonly ScopeType[] = ["*", "Namespaced", "Cluster"];

function generators(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const chance = (p: number): boolean => random() < p;
  /** One to `max` distinct items, with `*` mixed in at probability `wild`. */
  const some = (items: readonly string[], max: number, wild: number): string[] => {
    const out = new Set<string>();
    const n = 1 + Math.floor(random() * max);
    for (let i = 0; i < n; i++) out.add(chance(wild) ? "*" : pick(items));
    return [...out];
  };

  const resourcePattern = (): string => {
    const res = chance(0.1) ? "*" : pick(RESOURCES);
    const roll = random();
    if (roll < 0.6) return res;
    if (roll < 0.75) return `${res}/*`;
    return `${res}/${pick(SUBRESOURCES)}`;
  };

  const genRule = (): NamedRuleWithOperations => ({
    operations: chance(0.2) ? ["*"] : (some(OPS, 2, 0) as RuleOperation[]),
    apiGroups: some(GROUPS, 2, 0.1),
    apiVersions: some(VERSIONS, 2, 0.3),
    resources: Array.from({ length: 1 + Math.floor(random() * 2) }, resourcePattern),
    resourceNames: chance(0.1) ? ["a"] : [],
    scope: pick(SCOPES),
  });

  const genMatch = (rules: number): MatchResources => ({
    resourceRules: Array.from({ length: rules }, genRule),
    excludeResourceRules: chance(0.1) ? [genRule()] : [],
    matchPolicy: chance(0.5) ? "Equivalent" : "Exact",
  });

  const genEntry = (value: number): IndexEntry<number> => {
    const constraints = chance(0.03) ? undefined : genMatch(chance(0.01) ? 0 : 1 + Math.floor(random() * 2));
    const roll = random();
    const binding =
      roll < 0.4 ? undefined : roll < 0.5 ? genMatch(0) : genMatch(1 + Math.floor(random() * 2));
    return { value, constraints, bindingResources: binding };
  };

  const genGvr = (): GroupVersionResource => gvr(pick(GROUPS), pick(VERSIONS), pick(RESOURCES));

  const genRequest = (): AdmissionRequest => {
    const own = genGvr();
    const sub = chance(0.3) ? pick(SUBRESOURCES) : undefined;
    const roll = random();
    const requestResource =
      roll < 0.3 ? genGvr() : roll < 0.4 ? { ...own, version: pick(VERSIONS) } : undefined;
    return request({
      gvr: own,
      ...(sub === undefined ? {} : { subResource: sub }),
      op: pick(OPS),
      name: pick(["", "a", "b"]),
      namespace: pick(["", "default", "prod"]),
      ...(requestResource === undefined ? {} : { requestResource }),
      ...(requestResource !== undefined && chance(0.3)
        ? { requestSubResource: chance(0.5) ? "" : pick(SUBRESOURCES) }
        : {}),
    });
  };

  return { genEntry, genRequest };
}

void test("policy index: never leaves out an entry the matcher selects (random entries and requests)", () => {
  const { genEntry, genRequest } = generators(prng(0xce19a7e));
  const entries = Array.from({ length: 400 }, (_, i) => genEntry(i));
  const index = new PolicyIndex(entries);
  const requests = 3000;

  let candidateTotal = 0;
  let selectedTotal = 0;
  let viaEquivalent = 0;
  for (let r = 0; r < requests; r++) {
    const req = genRequest();
    const got = index.candidates(req);
    for (let i = 1; i < got.length; i++) {
      assert.ok((got[i - 1] as number) < (got[i] as number), "candidates are in entry order, each once");
    }
    const have = new Set(got);
    for (const e of entries) {
      if (e.constraints === undefined) continue;
      const policy = matchesResources(e.constraints, req, ctx);
      if (policy.status === "not-matched") continue;
      const binding = matchesResources(e.bindingResources, req, ctx);
      if (binding.status === "not-matched") continue;
      selectedTotal++;
      if (
        (policy.status === "matched" && policy.equivalent) ||
        (binding.status === "matched" && binding.equivalent)
      ) {
        viaEquivalent++;
      }
      assert.ok(
        have.has(e.value),
        `request ${r}: entry ${e.value} is selected by the matcher but not a candidate`,
      );
    }
    candidateTotal += got.length;
  }

  // The checks above only mean something if the generated data exercises them.
  assert.ok(selectedTotal > requests, `only ${selectedTotal} selections in ${requests} requests`);
  assert.ok(viaEquivalent > 50, `only ${viaEquivalent} selections through the requestResource`);
  const mean = candidateTotal / requests;
  assert.ok(mean < entries.length / 10, `mean candidate count ${mean} of ${entries.length} entries`);
  // Pruning beyond the selected set is bounded too: the index is not returning everything wildcard-ish.
  assert.ok(
    candidateTotal < selectedTotal * 5,
    `${candidateTotal} candidates for ${selectedTotal} selections`,
  );
});

// The index remembers the last request's candidates (a webhook's requests mostly name the same
// resources): a request must get the same list whatever was asked before it.
void test("policy index: the answer does not depend on the request asked before", () => {
  const { genEntry, genRequest } = generators(prng(0x5eed));
  const entries = Array.from({ length: 200 }, (_, i) => genEntry(i));
  const index = new PolicyIndex(entries);
  const requests = Array.from({ length: 300 }, genRequest);
  const alone = requests.map((r) => [...new PolicyIndex(entries).candidates(r)]);
  let repeats = 0;
  for (let i = 0; i < requests.length; i++) {
    const req = requests[i] as AdmissionRequest;
    const before = requests[(i * 7) % requests.length] as AdmissionRequest;
    index.candidates(before);
    assert.deepEqual(
      [...index.candidates(req)],
      alone[i],
      `request ${i}, after request ${(i * 7) % requests.length}`,
    );
    // Asked again at once: the remembered list, the same entries.
    assert.deepEqual([...index.candidates(req)], alone[i]);
    // A copy of the request, its strings equal but not the same objects.
    const copy = JSON.parse(JSON.stringify(req)) as AdmissionRequest;
    assert.deepEqual([...index.candidates(copy)], alone[i]);
    if ((alone[i] as unknown[]).length > 0) repeats++;
  }
  assert.ok(repeats > 50, `only ${repeats} requests with candidates`);
});
