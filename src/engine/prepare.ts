/**
 * The request's variables as CEL sees them (`object`, `oldObject`, `request`, `namespaceObject`,
 * `authorizer`, `params`), prepared once per review and built lazily, as the policies read them.
 */
import { AuthorizerValue, type CelValue, ResourceCheck, unavailableAuthorizer } from "../cel/index.ts";
import type { PolicyNeeds } from "../compile/policy.ts";
import type { AdmissionRequest } from "../request/types.ts";
import { createNamespaceObject } from "../kube/namespace.ts";
import type { EngineContext } from "./context.ts";

function userInfoValue(u: AdmissionRequest["userInfo"]): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.username, groups: [...u.groups] };
  if (u.uid) out.uid = u.uid;
  if (u.extra) out.extra = u.extra;
  return out;
}

/** Each stored Namespace's `namespaceObject`, built once: stored Namespaces live as long as their set. */
const namespaceObjects = new WeakMap<object, CelValue>();

/**
 * `namespaceObject`, as the validating and mutating policy dispatchers pass it (kubernetes
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go and
 * mutating/dispatcher.go): null for a cluster-scoped resource (the request has no namespace) and
 * for a request on a Namespace itself, whose request names the Namespace as its own namespace (the
 * dispatchers' "special case": a.GetKind() is core v1 Namespace); else the Namespace looked up by
 * the request's namespace, built by CreateNamespaceObject (kube/namespace.ts).
 */
function namespaceObjectOf(r: AdmissionRequest, ctx: EngineContext): CelValue {
  const name = r.namespace;
  if (name === "") return null;
  const kind = r.requestKind ?? r.kind;
  if (kind.kind === "Namespace" && kind.version === "v1" && kind.group === "") return null;
  const stored = ctx.namespace(name);
  if (stored === undefined) return null;
  let shaped = namespaceObjects.get(stored);
  if (shaped === undefined) {
    shaped = createNamespaceObject(stored) as CelValue;
    namespaceObjects.set(stored, shaped);
  }
  return shaped;
}

/**
 * Built key by key: conditional spreads are slow to build in V8, and this runs once per review.
 * The API server converts the AdmissionRequest to unstructured, which drops empty `omitempty`
 * fields (k8s.io/api/admission/v1 types.go; apiserver admission/plugin/cel/condition.go
 * convertObjectToUnstructured): an empty name or namespace is absent, so `has()` is false and a
 * read of it is no such key.
 */
function requestValue(r: AdmissionRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {
    uid: r.uid,
    kind: r.kind,
    resource: r.resource,
    operation: r.operation,
    userInfo: userInfoValue(r.userInfo),
    dryRun: r.dryRun,
    options: r.options,
  };
  if (r.name !== "") out.name = r.name;
  if (r.namespace !== "") out.namespace = r.namespace;
  if (r.subResource) out.subResource = r.subResource;
  if (r.requestKind) out.requestKind = r.requestKind;
  if (r.requestResource) out.requestResource = r.requestResource;
  if (r.requestSubResource) out.requestSubResource = r.requestSubResource;
  return out;
}

function requestResourceAttributes(r: AdmissionRequest): ResourceCheck["attrs"] {
  const out: { -readonly [K in keyof ResourceCheck["attrs"]]: ResourceCheck["attrs"][K] } = {
    group: r.resource.group,
    resource: r.resource.resource,
  };
  if (r.subResource) out.subresource = r.subResource;
  out.namespace = r.namespace;
  out.name = r.name;
  return out;
}

/**
 * The request's variables as CEL sees them, for one review. `object` and `oldObject` are the JSON
 * as it came (the evaluator converts what it reads, runtime/values.ts fromJson). The others are built when
 * the first policy that reads them is evaluated (CompiledPolicy.needs), then shared by the rest.
 * Most policies read only `object`, so nothing else is built for them, and no memo for policies that
 * share nothing (see docs/benchmarks.md).
 */
export class PreparedRequest {
  private requestV: CelValue | undefined;
  private namespaceV: CelValue | undefined;
  private authorizerV: AuthorizerValue | undefined;
  private requestResourceV: ResourceCheck | undefined;
  constructor(
    readonly request: AdmissionRequest,
    private readonly ctx: EngineContext,
  ) {}

  get requestValue(): CelValue {
    this.requestV ??= requestValue(this.request) as CelValue;
    return this.requestV;
  }
  get namespaceObject(): CelValue {
    // Not `??=`: null is a value here, computed once like any other.
    if (this.namespaceV === undefined) this.namespaceV = namespaceObjectOf(this.request, this.ctx);
    return this.namespaceV;
  }
  get authorizer(): AuthorizerValue {
    this.authorizerV ??= new AuthorizerValue(
      this.ctx.authorizer ?? unavailableAuthorizer,
      this.request.userInfo.username,
      this.request.userInfo.groups,
    );
    return this.authorizerV;
  }
  get requestResource(): ResourceCheck {
    this.requestResourceV ??= new ResourceCheck(this.authorizer, requestResourceAttributes(this.request));
    return this.requestResourceV;
  }
  /**
   * The variables of one policy evaluation: every one, written out so each activation has the same
   * shape, and null for those `needs` says no expression reads. `object` is the working object
   * when a mutation has changed it.
   */
  values(needs: PolicyNeeds, params: CelValue, object?: CelValue): Record<string, CelValue> {
    return {
      object: object === undefined ? (this.request.object as CelValue) : object,
      oldObject: this.request.oldObject as CelValue,
      request: needs.request ? this.requestValue : null,
      namespaceObject: needs.namespaceObject ? this.namespaceObject : null,
      authorizer: needs.authorizer ? this.authorizer : null,
      "authorizer.requestResource": needs.requestResource ? this.requestResource : null,
      params,
    };
  }
  /** Every variable, built now: for callers that bind them all (the REPL, the differential test). */
  allValues(): Record<string, CelValue> {
    return this.values(EVERY_VARIABLE, null);
  }
}

/** Needs that build every variable (and no memo). */
const EVERY_VARIABLE: PolicyNeeds = {
  request: true,
  namespaceObject: true,
  authorizer: true,
  requestResource: true,
  memo: 0,
};

export function prepare(request: AdmissionRequest, ctx: EngineContext): PreparedRequest {
  return new PreparedRequest(request, ctx);
}
