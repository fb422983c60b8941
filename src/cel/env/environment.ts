/**
 * The CEL environment: which variables exist, which functions (merged from the libraries), and
 * which opt-in features are on. One environment is built per configuration and shared by every
 * expression compiled against it.
 */
import { ALL_LIBRARIES } from "../library/index.ts";
import { STRINGS_BEFORE_CEL_GO_0_22 } from "../library/strings.ts";
import type { FunctionDecl, Overload, TypeTag } from "../library/types.ts";
import { parseRelease, releaseModel } from "./releases.ts";

/** The admission variables, named once (Kyverno's keys.go does the same). */
export const ADMISSION_VARIABLES = {
  object: "dyn",
  oldObject: "dyn",
  request: "dyn",
  params: "dyn",
  namespaceObject: "dyn",
  authorizer: "kubernetes.authorization.Authorizer",
  "authorizer.requestResource": "kubernetes.authorization.ResourceCheck",
} as const satisfies Record<string, TypeTag>;

/**
 * The request's own variables: the objects of the request, its parameters and its namespace. Their
 * values are JSON when an activation says so (state/activation.ts Activation.json), and they stay
 * the same for a whole policy evaluation, so a subexpression that reads only them can be computed
 * once per evaluation (plan/shared.ts).
 */
export const REQUEST_VARIABLES: ReadonlySet<string> = new Set([
  "object",
  "oldObject",
  "request",
  "params",
  "namespaceObject",
]);

/** Which compile-time checks an environment's expressions get (EnvOptions.checks). */
export type CheckMode = "kubernetes" | "cel" | "none";

/** Features that are not part of the API server's admission environment; off unless asked for. */
export interface CelExtras {
  /** `cel.bind(name, init, body)`. */
  readonly bind?: boolean;
  /** The `math.*` extension. */
  readonly math?: boolean;
  /** `base64.encode` / `base64.decode`. */
  readonly base64?: boolean;
}

export const EXTRA_NAMES = ["bind", "math", "base64"] as const;

export interface EnvOptions {
  /** Top-level variables and their types. */
  readonly variables: Readonly<Record<string, TypeTag>>;
  /** Names usable as `variables.<name>` (a policy's `spec.variables`); absent: no `variables`. */
  readonly policyVariables?: readonly string[];
  /** Struct types allowed in literals: `Object` (ApplyConfiguration) and `JSONPatch`, for mutations. */
  readonly structTypes?: readonly string[];
  readonly extras?: CelExtras;
  /**
   * Which compile-time checks expressions get (src/cel/checking.ts): `kubernetes` (the default),
   * cel-go's checker and the AST validators the API server adds (homogeneous aggregate literals,
   * duration/timestamp/regex literals, format strings); `cel`, cel-go's checker alone, as cel-spec's
   * conformance tests and tests of run-time semantics on mixed literals run it; `none`, no static
   * check at all, as cel-spec's `disable_check` tests run (never for policies: the API server checks).
   */
  readonly checks?: CheckMode;
  /**
   * The cluster's Kubernetes release (`1.33`), the newest modelled when absent: expressions are
   * checked as its API server checks a new expression, in the environment releases.ts
   * checkEnvironment gives (the release before it, plus what comes with its cel-go).
   */
  readonly kubernetesVersion?: string;
}

export interface CelEnvironment {
  readonly variables: ReadonlyMap<string, TypeTag>;
  readonly policyVariables: ReadonlySet<string> | undefined;
  readonly functions: ReadonlyMap<string, readonly Overload[]>;
  readonly structTypes: ReadonlySet<string>;
  readonly extras: Required<CelExtras>;
  readonly checks: CheckMode;
  readonly kubernetesVersion: string | undefined;
  /** A key naming this configuration, for caches of compiled programs. */
  readonly key: string;
}

const LIBRARY_FOR_EXTRA: Record<string, keyof CelExtras> = { math: "math", encoders: "base64" };

/** The overloads that behave otherwise at `release` than at the newest (releases.ts RuntimeSwitches). */
function runtimeOverrides(release: string | undefined): ReadonlyMap<string, Overload> {
  const parsed = release === undefined ? undefined : parseRelease(release);
  if (!parsed?.ok) return NO_OVERRIDES;
  return releaseModel(parsed.value).runtime.indexOfPastEndIsMinusOne
    ? NO_OVERRIDES
    : STRINGS_BEFORE_CEL_GO_0_22;
}

/**
 * The overloads `release`'s cel-go no longer has (releases.ts BINARY_REMOVALS): a call that reaches
 * one through `dyn` finds no overload there, as in cel-go; the default release's when none is given.
 */
function runtimeRemovals(release: string | undefined): readonly string[] {
  const parsed = release === undefined ? undefined : parseRelease(release);
  return releaseModel(parsed?.ok ? parsed.value : undefined).binaryRemovedOverloads;
}

const NO_OVERRIDES: ReadonlyMap<string, Overload> = new Map();

export function createEnvironment(options: EnvOptions): CelEnvironment {
  const extras: Required<CelExtras> = {
    bind: options.extras?.bind ?? false,
    math: options.extras?.math ?? false,
    base64: options.extras?.base64 ?? false,
  };
  const variables = new Map(Object.entries(options.variables));
  const policyVariables = options.policyVariables ? new Set(options.policyVariables) : undefined;
  const structTypes = new Set(options.structTypes ?? []);
  const key = JSON.stringify([
    [...variables].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    [...(policyVariables ?? [])],
    [...structTypes].sort(),
    extras,
    options.checks ?? "kubernetes",
    options.kubernetesVersion ?? "",
  ]);
  // An environment is immutable, and every expression of a policy set asks for one of a few
  // configurations: each is built once, so a compiled program keeps a shared one, not its own copy
  // of the function table.
  const cached = ENVIRONMENTS.get(key);
  if (cached) return cached;
  const checks = options.checks ?? "kubernetes";
  const kubernetesVersion = options.kubernetesVersion;
  const functions = functionTable(extras, kubernetesVersion);
  const env = { variables, policyVariables, functions, structTypes, extras, checks, kubernetesVersion, key };
  if (ENVIRONMENTS.size >= ENVIRONMENT_LIMIT) ENVIRONMENTS.clear();
  ENVIRONMENTS.set(key, env);
  return env;
}

/** Environments by key (CelEnvironment.key), bounded: policies with distinct variable lists each add one. */
const ENVIRONMENTS = new Map<string, CelEnvironment>();
const ENVIRONMENT_LIMIT = 1000;
/** Function tables by the extras and the release's run-time overrides: a handful in any process. */
const FUNCTION_TABLES = new Map<string, ReadonlyMap<string, readonly Overload[]>>();

/** The functions of the libraries `extras` turns on, with the overloads `release` runs otherwise. */
function functionTable(
  extras: Required<CelExtras>,
  release: string | undefined,
): ReadonlyMap<string, readonly Overload[]> {
  const swapped = runtimeOverrides(release);
  const removed = runtimeRemovals(release);
  const key = `${JSON.stringify(extras)}\u0000${swapped === NO_OVERRIDES ? "" : "past"}\u0000${removed.join(",")}`;
  const cached = FUNCTION_TABLES.get(key);
  if (cached) return cached;
  const functions = new Map<string, Overload[]>();
  // Which functions a release has is the type checker's to say (cel/check decls by release): the
  // run time keeps every library, swaps in the overloads that behave otherwise there, and drops
  // those its cel-go no longer has.
  const add = (decl: FunctionDecl): void => {
    const list = functions.get(decl.name) ?? [];
    for (const o of decl.overloads) if (!removed.includes(o.id)) list.push(swapped.get(o.id) ?? o);
    functions.set(decl.name, list);
  };
  for (const lib of ALL_LIBRARIES) {
    if (lib.availability === "none") continue;
    if (lib.availability === "extra") {
      const flag = LIBRARY_FOR_EXTRA[lib.name];
      if (!flag || !extras[flag]) continue;
    }
    lib.functions.forEach(add);
  }
  FUNCTION_TABLES.set(key, functions);
  return functions;
}
