/**
 * Kubernetes' authorizer library: `authorizer.group('apps').resource('deployments')
 * .namespace('ns').name('x').check('delete').allowed()` and friends. The answers come from an
 * AuthorizerBackend: a table of rules offline (`eval`, `test`, `repl`), SubjectAccessReviews when
 * `serve` or `audit` is connected to a cluster (src/cluster/sar.ts), or none — then checks fail
 * with a clear error, handled by failurePolicy.
 */
import { CelError, CelObject, type CelValue } from "../runtime/values.ts";
import { fn, type Library, memberFn } from "./types.ts";

/** What is being asked, as in Kubernetes' authorizer.Attributes. */
export interface AuthorizationAttributes {
  readonly user: string;
  readonly groups: readonly string[];
  readonly verb: string;
  /** Resource checks. */
  readonly group?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  /**
   * The selectors of a resource check, as written (`fieldSelector()` / `labelSelector()`, the
   * AuthzSelectors library); the API server parses them into requirements for its authorizers.
   */
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
  /** Non-resource (path) checks. */
  readonly path?: string;
}

export interface AuthorizationAnswer {
  readonly decision: "allow" | "deny" | "no-opinion";
  readonly reason: string;
  /** Set when the backend could not decide; `errored()` is then true. */
  readonly error?: string;
}

export interface AuthorizerBackend {
  authorize(attributes: AuthorizationAttributes): AuthorizationAnswer;
}

/** The backend without a cluster or a table: every check is an error. */
export const unavailableAuthorizer: AuthorizerBackend = {
  authorize: () => {
    throw new CelError(
      "authorizer is not available: celgate is not connected to a cluster (serve with --kubeconfig, or in a pod)",
    );
  },
};

/** The `authorizer` variable: the requesting user (or a service account) plus the backend. */
export class AuthorizerValue extends CelObject {
  readonly celType = "kubernetes.authorization.Authorizer";
  constructor(
    readonly backend: AuthorizerBackend,
    readonly user: string,
    readonly groups: readonly string[],
  ) {
    super();
  }
  equals(other: CelValue): boolean {
    return other === this;
  }
  toJSON(): unknown {
    return { user: this.user, groups: this.groups };
  }
}

export class PathCheck extends CelObject {
  readonly celType = "kubernetes.authorization.PathCheck";
  constructor(
    readonly authz: AuthorizerValue,
    readonly path: string,
  ) {
    super();
  }
  equals(other: CelValue): boolean {
    return other === this;
  }
  toJSON(): unknown {
    return { path: this.path };
  }
}

/** `authorizer.group(g)`: a check with only its API group so far; `resource()` makes it a ResourceCheck. */
export class GroupCheck extends CelObject {
  readonly celType = "kubernetes.authorization.GroupCheck";
  constructor(
    readonly authz: AuthorizerValue,
    readonly group: string,
  ) {
    super();
  }
  equals(other: CelValue): boolean {
    return other === this;
  }
  toJSON(): unknown {
    return { group: this.group };
  }
}

export class ResourceCheck extends CelObject {
  readonly celType = "kubernetes.authorization.ResourceCheck";
  constructor(
    readonly authz: AuthorizerValue,
    readonly attrs: Omit<AuthorizationAttributes, "user" | "groups" | "verb" | "path">,
  ) {
    super();
  }
  with(patch: Partial<ResourceCheck["attrs"]>): ResourceCheck {
    return new ResourceCheck(this.authz, { ...this.attrs, ...patch });
  }
  equals(other: CelValue): boolean {
    return other === this;
  }
  toJSON(): unknown {
    return this.attrs;
  }
}

export class AuthorizationDecision extends CelObject {
  readonly celType = "kubernetes.authorization.Decision";
  constructor(readonly answer: AuthorizationAnswer) {
    super();
  }
  equals(other: CelValue): boolean {
    return (
      other instanceof AuthorizationDecision &&
      other.answer.decision === this.answer.decision &&
      other.answer.reason === this.answer.reason
    );
  }
  toJSON(): unknown {
    return this.answer;
  }
}

function ask(
  authz: AuthorizerValue,
  attrs: Omit<AuthorizationAttributes, "user" | "groups">,
): AuthorizationDecision {
  try {
    return new AuthorizationDecision(
      authz.backend.authorize({ user: authz.user, groups: authz.groups, ...attrs }),
    );
  } catch (e) {
    if (e instanceof CelError) throw e;
    return new AuthorizationDecision({
      decision: "no-opinion",
      reason: "",
      error: e instanceof Error ? e.message : String(e),
    });
  }
}

const BLANK = /^\p{White_Space}*$/u;

/** Go's `strings.TrimSpace(s) == ""`: unicode.IsSpace is Unicode's White_Space property. */
function isBlank(s: string): boolean {
  return BLANK.test(s);
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && s.split(".").every((part) => DNS1123_LABEL.test(part));
}

const A = "kubernetes.authorization.Authorizer";
const P = "kubernetes.authorization.PathCheck";
const G = "kubernetes.authorization.GroupCheck";
const R = "kubernetes.authorization.ResourceCheck";
const D = "kubernetes.authorization.Decision";

export const authzLibrary: Library = {
  name: "authz",
  availability: "kubernetes",
  functions: [
    fn(
      "path",
      memberFn("authorizer_path", [A, "string"], P, (a: AuthorizerValue, p: string) => {
        if (isBlank(p)) throw new CelError("path must not be empty");
        return new PathCheck(a, p);
      }),
    ),
    fn(
      "group",
      memberFn("authorizer_group", [A, "string"], G, (a: AuthorizerValue, g: string) => new GroupCheck(a, g)),
    ),
    fn(
      "serviceAccount",
      memberFn(
        "authorizer_serviceaccount",
        [A, "string", "string"],
        A,
        (a: AuthorizerValue, ns: string, name: string) => {
          // apimachinery's ValidateServiceAccountName (a DNS-1123 subdomain) and
          // ValidateNamespaceName (a DNS-1123 label), with authz.go's messages.
          if (!isDns1123Subdomain(name)) throw new CelError("Invalid service account name");
          if (!isDns1123Label(ns)) throw new CelError("Invalid service account namespace");
          return new AuthorizerValue(a.backend, `system:serviceaccount:${ns}:${name}`, [
            "system:serviceaccounts",
            `system:serviceaccounts:${ns}`,
            "system:authenticated",
          ]);
        },
      ),
    ),
    fn(
      "resource",
      memberFn("groupcheck_resource", [G, "string"], R, (g: GroupCheck, resource: string) => {
        if (isBlank(resource)) throw new CelError("resource must not be empty");
        return new ResourceCheck(g.authz, { group: g.group, resource });
      }),
    ),
    fn(
      "subresource",
      memberFn("resourcecheck_subresource", [R, "string"], R, (r: ResourceCheck, v: string) =>
        r.with({ subresource: v }),
      ),
    ),
    fn(
      "namespace",
      memberFn("resourcecheck_namespace", [R, "string"], R, (r: ResourceCheck, v: string) =>
        r.with({ namespace: v }),
      ),
    ),
    fn(
      "name",
      memberFn("resourcecheck_name", [R, "string"], R, (r: ResourceCheck, v: string) => r.with({ name: v })),
    ),
    fn(
      "check",
      memberFn("pathcheck_check", [P, "string"], D, (p: PathCheck, verb: string) =>
        ask(p.authz, { verb, path: p.path }),
      ),
      memberFn("resourcecheck_check", [R, "string"], D, (r: ResourceCheck, verb: string) =>
        ask(r.authz, { verb, ...r.attrs }),
      ),
    ),
    fn(
      "allowed",
      memberFn("decision_allowed", [D], "bool", (d: AuthorizationDecision) => d.answer.decision === "allow"),
    ),
    fn(
      "reason",
      memberFn("decision_reason", [D], "string", (d: AuthorizationDecision) => d.answer.reason),
    ),
    fn(
      "errored",
      memberFn("decision_errored", [D], "bool", (d: AuthorizationDecision) => d.answer.error !== undefined),
    ),
    fn(
      "error",
      memberFn("decision_error", [D], "string", (d: AuthorizationDecision) => d.answer.error ?? ""),
    ),
  ],
};

/**
 * Kubernetes' AuthzSelectors library (authz.go, Kubernetes 1.31+): selectors on a resource check.
 * A selector that does not parse is the API server's to drop; it is passed on as written. Whether an
 * environment has this library depends on the Kubernetes release it models (the checker declares it by release).
 */
export const authzSelectorsLibrary: Library = {
  name: "kubernetes.authzSelectors",
  availability: "kubernetes",
  functions: [
    fn(
      "fieldSelector",
      memberFn("authorizer_fieldselector", [R, "string"], R, (r: ResourceCheck, v: string) =>
        r.with({ fieldSelector: v }),
      ),
    ),
    fn(
      "labelSelector",
      memberFn("authorizer_labelselector", [R, "string"], R, (r: ResourceCheck, v: string) =>
        r.with({ labelSelector: v }),
      ),
    ),
  ],
};
