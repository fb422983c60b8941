/**
 * Existing objects for `celgate audit`: which resources the policies can select (from discovery,
 * each group's preferred version, only resources that can be listed), and their objects page by
 * page with `limit`/`continue`, so that no more than a page is held at a time.
 */
import type { CompiledPolicySet } from "../compile/policy.ts";
import type { NamedRuleWithOperations } from "../policy/types.ts";
import type { ApiClient } from "./client.ts";
import { collectionPath, type ResourceInfo } from "./discovery.ts";
import type { KubeObject } from "./reflector.ts";

interface DiscoveredResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly verbs?: readonly string[];
}

async function getJson(client: ApiClient, path: string): Promise<unknown> {
  const res = await client.request("GET", path);
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return res.body;
}

/** Every listable resource the server serves, in each group's preferred version. */
export async function listableResources(client: ApiClient): Promise<ResourceInfo[]> {
  const out: ResourceInfo[] = [];
  const add = (group: string, version: string, list: unknown) => {
    const resources = ((list as { resources?: DiscoveredResource[] }).resources ??
      []) as DiscoveredResource[];
    for (const r of resources) {
      if (r.name.includes("/") || !(r.verbs ?? []).includes("list")) continue;
      out.push({
        apiVersion: group === "" ? version : `${group}/${version}`,
        kind: r.kind,
        group,
        version,
        resource: r.name,
        namespaced: r.namespaced,
      });
    }
  };
  add("", "v1", await getJson(client, "/api/v1"));
  const groups = (await getJson(client, "/apis")) as {
    groups?: { name: string; preferredVersion?: { version: string } }[];
  };
  for (const g of groups.groups ?? []) {
    const version = g.preferredVersion?.version;
    if (!version) continue;
    add(g.name, version, await getJson(client, `/apis/${g.name}/${version}`));
  }
  return out;
}

function ruleSelects(rule: NamedRuleWithOperations, r: ResourceInfo): boolean {
  const creates = rule.operations.some((o) => o === "*" || o === "CREATE");
  const group = rule.apiGroups.some((g) => g === "*" || g === r.group);
  const resource = rule.resources.some((x) => x === "*" || x === r.resource);
  const scope = rule.scope === "*" || (rule.scope === "Namespaced") === r.namespaced;
  // Any version: matchPolicy Equivalent (the default) matches the resource in every version.
  return creates && group && resource && scope;
}

/** The resources some policy of the set could select on a CREATE. */
export function resourcesToAudit(set: CompiledPolicySet, available: readonly ResourceInfo[]): ResourceInfo[] {
  const rules = set.policies.flatMap((p) => p.policy.matchConstraints?.resourceRules ?? []);
  return available.filter((r) => rules.some((rule) => ruleSelects(rule, r)));
}

/**
 * The objects of one resource, a page at a time (built-in kinds' list items get their apiVersion
 * and kind back). An expired continue token (410) starts the list over, as kubectl does not: an
 * audit that restarts sees some objects twice rather than missing some.
 */
export async function* pages(
  client: ApiClient,
  resource: ResourceInfo,
  pageSize = 500,
): AsyncGenerator<KubeObject[]> {
  let token: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (token) query.set("continue", token);
    const path = `${collectionPath(resource)}?${query}`;
    const res = await client.request("GET", path);
    if (res.status === 410 && token) {
      token = undefined;
      continue;
    }
    if (res.status !== 200) throw new Error(`list ${collectionPath(resource)}: HTTP ${res.status}`);
    const page = res.body as { metadata?: { continue?: string }; items?: KubeObject[] };
    yield (page.items ?? []).map((o) =>
      o.apiVersion !== undefined && o.kind !== undefined
        ? o
        : { apiVersion: resource.apiVersion, kind: resource.kind, ...o },
    );
    token = page.metadata?.continue || undefined;
    if (!token) return;
  }
}
