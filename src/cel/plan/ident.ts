/**
 * Names: comprehension and bind variables (slots), the environment's variables, the policy's
 * `variables` (bare, or `variables.<name>`), dotted variable names (`authorizer.requestResource`)
 * and type names used as values (`int`, `net.IP`).
 */
import { REQUEST_VARIABLES } from "../env/environment.ts";
import { HeldError } from "../runtime/errors.ts";
import type { TypeTag } from "../runtime/tags.ts";
import { CelError, CelMap, CelType, type CelValue } from "../runtime/values.ts";
import type { Expr, SelectNode } from "../syntax/ast.ts";
import { elementPath } from "./emit.ts";
import { type Compiled, failingNode, type PlanContext } from "./node.ts";

/** Type names usable as values, as in `type(x) == int`. */
const TYPE_CONSTANTS: Readonly<Record<string, string>> = {
  int: "int",
  uint: "uint",
  double: "double",
  bool: "bool",
  string: "string",
  bytes: "bytes",
  list: "list",
  map: "map",
  null_type: "null_type",
  type: "type",
  optional_type: "optional_type",
};

/**
 * Dotted type names usable as values, as in `type(ip('1.2.3.4')) == net.IP`: the types Kubernetes'
 * libraries register (their Types(), with the names apiserver/pkg/cel declares: quantity.go, url.go,
 * semver.go, format.go, ip.go, cidr.go, library/authz.go).
 */
const QUALIFIED_TYPES: ReadonlySet<string> = new Set([
  "google.protobuf.Duration",
  "google.protobuf.Timestamp",
  "net.IP",
  "net.CIDR",
  "kubernetes.Quantity",
  "kubernetes.URL",
  "kubernetes.Semver",
  "kubernetes.NamedFormat",
  // apiserver/pkg/cel/library/authz.go's Types().
  "kubernetes.authorization.Authorizer",
  "kubernetes.authorization.PathCheck",
  "kubernetes.authorization.GroupCheck",
  "kubernetes.authorization.ResourceCheck",
  "kubernetes.authorization.Decision",
]);

// --- check -----------------------------------------------------------------------------------

/** What a name refers to, innermost first. */
type Name =
  | { readonly kind: "local"; readonly slot: number }
  | { readonly kind: "variable"; readonly type: TypeTag }
  | { readonly kind: "variables" }
  | { readonly kind: "type"; readonly name: string }
  | { readonly kind: "undeclared" };

function resolveName(p: PlanContext, name: string): Name {
  const slot = p.lookupLocal(name);
  if (slot !== undefined) return { kind: "local", slot };
  const declared = p.env.variables.get(name);
  if (declared !== undefined) return { kind: "variable", type: declared };
  if (name === "variables" && p.env.policyVariables) return { kind: "variables" };
  const t = TYPE_CONSTANTS[name];
  if (t !== undefined) return { kind: "type", name: t };
  return { kind: "undeclared" };
}

/** What a selection that is a name refers to (planSelectedName). */
type SelectedName =
  /** `variables.<name>`, at its place among the policy's variables (-1: not one of them). */
  | { readonly kind: "policyVariable"; readonly index: number }
  | { readonly kind: "variable"; readonly name: string }
  | { readonly kind: "type"; readonly name: string };

function resolveSelectedName(p: PlanContext, e: SelectNode): SelectedName | undefined {
  const declared = p.env.policyVariables;
  if (
    e.operand.kind === "ident" &&
    e.operand.name === "variables" &&
    p.lookupLocal("variables") === undefined &&
    declared
  )
    return { kind: "policyVariable", index: [...declared].indexOf(e.field) };
  const q = qualifiedName(e);
  if (q === undefined) return undefined;
  if (p.env.variables.has(q) && p.lookupLocal(q.split(".")[0] as string) === undefined)
    return { kind: "variable", name: q };
  if (QUALIFIED_TYPES.has(q)) return { kind: "type", name: q };
  return undefined;
}

/** A dotted name (`a.b.c`) if the expression is one, for qualified function and type names. */
export function qualifiedName(e: Expr): string | undefined {
  if (e.kind === "ident") return e.name;
  if (e.kind === "select" && !e.testOnly && !e.optional) {
    const q = qualifiedName(e.operand);
    return q === undefined ? undefined : `${q}.${e.field}`;
  }
  return undefined;
}

// --- plan ------------------------------------------------------------------------------------

export function planIdent(p: PlanContext, name: string): Compiled {
  const r = resolveName(p, name);
  switch (r.kind) {
    case "local":
      return planLocal(p, r.slot);
    case "variable":
      p.uses.add(name);
      return planVariable(name, r.type);
    case "variables":
      return planAllVariables(p);
    case "type": {
      const v = new CelType(r.name);
      return { ev: () => v, type: "type" };
    }
    case "undeclared": {
      // The checker refuses an undeclared name; an environment without it fails at run time.
      return failingNode(`undeclared reference to '${name}'`);
    }
  }
}

/** A comprehension or bind variable, read from its slot. */
function planLocal(p: PlanContext, slot: number): Compiled {
  if (p.accumulators.has(slot)) {
    return {
      ev: (f) => {
        const v = f.slots[slot] as CelValue | HeldError;
        if (v instanceof HeldError) throw v.error;
        return v;
      },
      emit: (g) => {
        const t = g.temp();
        g.line(`${t} = ${g.slot(slot)}; if (${t} instanceof ${g.h.HeldError}) throw ${t}.error;`);
        return t;
      },
      type: "dyn",
    };
  }
  return {
    ev: (f) => f.slots[slot] as CelValue,
    emit: (g) => {
      const t = g.temp();
      g.line(`${t} = ${g.slot(slot)};`);
      return t;
    },
    type: "dyn",
    plain: p.plainSlots.has(slot),
    // A loop's element, the same until the loop takes the next (which empties its paths' locals).
    path: p.iterSlots.has(slot) ? (g) => elementPath(g, slot) : undefined,
  };
}

/** A variable of the environment, read from the activation (null when it has none). */
function planVariable(name: string, type: TypeTag): Compiled {
  return {
    ev: (f) => {
      const v = f.act.values[name];
      return v === undefined ? null : v;
    },
    emit: (g) => {
      const t = g.temp();
      g.line(`${t} = A.values[${JSON.stringify(name)}]; if (${t} === undefined) ${t} = null;`);
      return t;
    },
    type,
    plain: REQUEST_VARIABLES.has(name),
    // The activation's JSON, the same for as long as generated code runs.
    path: REQUEST_VARIABLES.has(name) ? () => `root:${JSON.stringify(name)}` : undefined,
  };
}

/** A bare `variables` (not `variables.x`): materialise them all as a map. */
function planAllVariables(p: PlanContext): Compiled {
  const names = [...(p.env.policyVariables ?? [])];
  p.uses.add("variables");
  return {
    ev: (f) => new CelMap(names.map((n, i) => [n, f.act.variables?.get(n, i) ?? null] as const)),
    type: "map",
  };
}

/**
 * A selection that is a name rather than a field read: `variables.<name>`, a dotted variable
 * (`authorizer.requestResource`) or a dotted type name. Undefined for a field read.
 */
export function planSelectedName(p: PlanContext, e: SelectNode): Compiled | undefined {
  const r = resolveSelectedName(p, e);
  if (r === undefined) return undefined;
  switch (r.kind) {
    case "policyVariable":
      return planPolicyVariable(p, e, r.index);
    case "variable":
      return planIdent(p, r.name);
    case "type": {
      const v = new CelType(r.name);
      return { ev: () => v, type: "type" };
    }
  }
}

/** `variables.<name>`: resolved lazily through the activation, checked against the declared names. */
function planPolicyVariable(p: PlanContext, e: SelectNode, index: number): Compiled {
  const { field } = e;
  if (index < 0) {
    return failingNode(`undeclared reference to 'variables.${field}'`);
  }
  p.uses.add("variables");
  if (e.testOnly) return { ev: () => true, type: "bool" };
  return {
    ev: (f) => {
      const r = f.act.variables;
      if (!r) throw new CelError(`no such attribute: variables.${field}`);
      return r.get(field, index);
    },
    emit: (g) => {
      const t = g.temp();
      const name = JSON.stringify(field);
      const missing = JSON.stringify(`no such attribute: variables.${field}`);
      g.line(
        `${t} = A.variables; if (!${t}) throw new ${g.h.CelError}(${missing}); ${t} = ${t}.get(${name}, ${index});`,
      );
      return t;
    },
    type: "dyn",
  };
}
