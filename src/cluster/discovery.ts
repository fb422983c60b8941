/**
 * Which resource serves a kind: its plural name and scope, from the API server's discovery
 * documents (`/api/v1`, `/apis/{group}/{version}`), the way client-go's RESTMapper finds them.
 * Discovery is asked at run time for every kind, built-in or custom: one request per group
 * version, cached. (`celgate manifests --rbac` has no cluster and uses the static table of
 * src/manifests/rbac.ts instead.)
 */
import { splitApiVersion } from "../kube/kinds.ts";
import type { ApiClient } from "./client.ts";

export interface ResourceInfo {
  readonly apiVersion: string;
  readonly kind: string;
  readonly group: string;
  readonly version: string;
  /** The plural resource name (`configmaps`). */
  readonly resource: string;
  readonly namespaced: boolean;
}

/** The collection path of a resource, all namespaces or one. */
export function collectionPath(r: ResourceInfo, namespace?: string): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return namespace !== undefined && r.namespaced
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`
    : `${base}/${r.resource}`;
}

interface ApiResourceList {
  readonly resources?: readonly { name: string; kind: string; namespaced: boolean }[];
}

export type Resolution =
  | { readonly ok: true; readonly resource: ResourceInfo }
  /** `missing`: the API server answered and does not serve the kind; else a failed request. */
  | { readonly ok: false; readonly missing: boolean; readonly message: string };

export class Discovery {
  private readonly groupVersions = new Map<string, Promise<ApiResourceList | undefined>>();

  constructor(private readonly client: ApiClient) {}

  /** Forgets what was learnt (a CRD may have been installed since). */
  reset(): void {
    this.groupVersions.clear();
  }

  async resolve(apiVersion: string, kind: string): Promise<Resolution> {
    const { group, version } = splitApiVersion(apiVersion);
    const path = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
    let pending = this.groupVersions.get(path);
    if (!pending) {
      pending = this.fetch(path);
      this.groupVersions.set(path, pending);
    }
    let list: ApiResourceList | undefined;
    try {
      list = await pending;
    } catch (e) {
      this.groupVersions.delete(path);
      return { ok: false, missing: false, message: `discovery ${path}: ${(e as Error).message}` };
    }
    // Subresources (`pods/status`) share the kind; the collection is the name without a slash.
    const found = list?.resources?.find((r) => r.kind === kind && !r.name.includes("/"));
    if (!found) {
      // Not cached: the kind may be served later (a CRD being installed).
      this.groupVersions.delete(path);
      return { ok: false, missing: true, message: `the server does not serve ${apiVersion} ${kind}` };
    }
    return {
      ok: true,
      resource: { apiVersion, kind, group, version, resource: found.name, namespaced: found.namespaced },
    };
  }

  private async fetch(path: string): Promise<ApiResourceList | undefined> {
    const res = await this.client.request("GET", path);
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    return res.body as ApiResourceList;
  }
}
