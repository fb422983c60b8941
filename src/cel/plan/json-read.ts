/**
 * Reading JSON maps inline in generated code: the tests that tell a JSON map (or a map the evaluator
 * built) from anything else, and the member reads written at their site, where V8 keeps a cache for
 * them. Whatever these do not read is left to runtime/access.ts, as the closures read it.
 */
import type { PlanGen } from "./helpers.ts";

/**
 * The condition, in generated code, under which `v` is read as a JSON map inline. `v.constructor`
 * is a property read V8 caches at the site; `Object.getPrototypeOf` is a builtin call that TurboFan
 * cannot fold for a value of unknown map, and it made a field read six times slower than the read
 * itself. The two tests differ only for a map with its own `constructor` member, which fails this
 * one and takes the caller's general path (which reads it correctly), and for an object whose
 * prototype inherits from Object.prototype, which no CEL value has.
 */
export function emitIsJsonMap(g: PlanGen, v: string): string {
  return emitHasConstructor(v, g.h.PlainObject);
}

/** `v` is an object made by the class `ctor` (a helper's name: Gen.h), tested as emitIsJsonMap tests. */
export function emitHasConstructor(v: string, ctor: string): string {
  return `${v} !== null && typeof ${v} === "object" && ${v}.constructor === ${ctor}`;
}

/**
 * Whether a JSON map (one {@link emitIsJsonMap} accepts) has the member `field`, in generated code:
 * a read, since a member holding undefined is absent (runtime/values.ts plainGet). Once a site has seen
 * many shapes of object, as a server's do, a read of a missing member is cheaper than `in`. Names Object.prototype has (constructor, toString...) go through hasOwn.
 */
export function emitJsonHas(g: PlanGen, v: string, field: string): string {
  const key = JSON.stringify(field);
  return field in Object.prototype
    ? `(${g.h.hasOwn}(${v}, ${key}) && ${v}[${key}] !== undefined)`
    : `${v}[${key}] !== undefined`;
}

/**
 * Generated code for `out = <field of v, converted>` when `v` is a JSON map or a map the evaluator
 * built, with the property read written at this site (so V8 keeps a cache for it here); `out` is
 * left undefined when the field is absent. Ends in an if/else-if whose conditions are false when
 * `v` is neither, for the caller's else branch.
 */
export function emitJsonRead(g: PlanGen, v: string, field: string, out: string): string {
  // A built map ({'path': p, 'c': c}, as policies make per container) holds CEL values already, and
  // never undefined; without this branch its reads took selectField's prototype lookups.
  return `if (${emitIsJsonMap(g, v)}) { ${emitMemberRead(g, v, field, out, "json")} } else if (${emitHasConstructor(v, g.h.BuiltMap)}) { ${emitMemberRead(g, v, field, out, "none")} }`;
}

/**
 * `out = <member field of the map v>`, undefined when absent (plainGet). `convert`: "json" turns a
 * JSON number (or Number object) or array into its CEL value, "keepArray" only a number (Compiled.emitList), "none"
 * nothing (a built map's members are CEL values already).
 */
export function emitMemberRead(
  g: PlanGen,
  v: string,
  field: string,
  out: string,
  convert: "json" | "keepArray" | "none",
): string {
  const key = JSON.stringify(field);
  // A Number object is a float64 with an integral value, read exactly (runtime/values.ts fromJson).
  const test =
    convert === "json"
      ? `typeof ${out} === "number" || Array.isArray(${out}) || ${out} instanceof Number`
      : `typeof ${out} === "number" || ${out} instanceof Number`;
  const conversion = convert === "none" ? "" : ` if (${test}) ${out} = ${g.h.fromJson}(${out});`;
  // Undefined, the member is absent: no second look with `in`.
  return field in Object.prototype
    ? `${out} = ${g.h.hasOwn}(${v}, ${key}) ? ${v}[${key}] : undefined;${conversion}`
    : `${out} = ${v}[${key}];${conversion}`;
}

/**
 * The condition, in generated code, under which `v`, a plain value (Compiled.plain), is a JSON map;
 * marks the function as relying on Activation.json.
 */
export function emitIsPlainMap(g: PlanGen, v: string): string {
  g.assumesJson = true;
  return `${v} !== null && typeof ${v} === "object" && !Array.isArray(${v})`;
}

/** emitJsonRead for a plain value: nothing else it can be has fields to read inline. */
export function emitPlainRead(g: PlanGen, v: string, field: string, out: string, keepArray = false): string {
  return `if (${emitIsPlainMap(g, v)}) { ${emitMemberRead(g, v, field, out, keepArray ? "keepArray" : "json")} }`;
}

/** A field read of `v` in generated code, as emitPlainRead or emitJsonRead writes it. */
export function emitFieldRead(
  g: PlanGen,
  plain: boolean | undefined,
  v: string,
  field: string,
  out: string,
): string {
  return plain ? emitPlainRead(g, v, field, out) : emitJsonRead(g, v, field, out);
}
