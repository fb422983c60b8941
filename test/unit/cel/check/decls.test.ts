/**
 * The typed declarations (src/cel/check/decls) against the runtime's overload tables
 * (src/cel/library, ALL_LIBRARIES): every runtime overload has a typed declaration and every
 * declaration a runtime overload (or the compiler's own implementation), joined by cel-go's
 * overload ids, so that the compiler can pick an implementation for each overload the checker
 * resolves. Where the two differ in shape, the difference is listed here with the upstream rule.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ALL_DECLS,
  BUILTIN_OVERLOADS,
  OVERLOADS_BY_ID,
  type OverloadDecl,
  RUNTIME_ALIASES,
} from "../../../../src/cel/check/decls/index.ts";
import { ALL_LIBRARIES } from "../../../../src/cel/library/index.ts";

interface Declared {
  readonly fn: string;
  readonly o: OverloadDecl;
}

const declared = new Map<string, Declared>();
for (const lib of ALL_DECLS)
  for (const f of lib.functions) for (const o of f.overloads) declared.set(o.id, { fn: f.name, o });

const runtime = new Map<string, { fn: string; member: boolean; arity: number }>();
for (const lib of ALL_LIBRARIES)
  for (const f of lib.functions)
    for (const o of f.overloads) runtime.set(o.id, { fn: f.name, member: o.member, arity: o.args.length });

/**
 * Same overload id, different call style, with the upstream file that has it so. None now: the
 * runtime's `sign` became global as library/quantity.go declares it (cel.Overload("quantity_sign")).
 */
const STYLE_DIFFERENCES: ReadonlyMap<string, string> = new Map<string, string>();

/** Same overload, another function name: cel-go's internal names for what syntax/parse.ts expands. */
const NAME_DIFFERENCES: ReadonlyMap<string, [string, string]> = new Map([
  // ext/comprehensions.go mapInsert = "cel.@mapInsert"; syntax/parse.ts calls it @mapInsert.
  ["@mapInsert_map_key_value", ["@mapInsert", "cel.@mapInsert"]],
  ["@mapInsert_map_map", ["@mapInsert", "cel.@mapInsert"]],
]);

test("decls: every runtime overload id has a typed declaration (directly or through RUNTIME_ALIASES)", () => {
  const missing: string[] = [];
  for (const id of runtime.keys()) {
    const typed = RUNTIME_ALIASES[id] ?? [id];
    for (const t of typed) if (!declared.has(t)) missing.push(`${id} → ${t}`);
  }
  assert.deepEqual(missing, []);
});

test("decls: every typed declaration has a runtime overload, an alias, or the compiler's own implementation", () => {
  const aliased = new Set(Object.values(RUNTIME_ALIASES).flat());
  const orphans = [...declared.keys()].filter(
    (id) => !runtime.has(id) && !aliased.has(id) && !BUILTIN_OVERLOADS.has(id),
  );
  assert.deepEqual(orphans, []);
});

test("decls: an alias names a runtime overload that has no typed declaration of its own", () => {
  for (const id of Object.keys(RUNTIME_ALIASES)) {
    assert.ok(runtime.has(id), `${id} is a runtime overload`);
    assert.ok(!declared.has(id), `${id} is not also a typed declaration`);
  }
});

test("decls: overloads with the same id have the same function name, call style and arity", () => {
  const problems: string[] = [];
  for (const [id, r] of runtime) {
    const d = declared.get(id);
    if (!d) continue;
    const names = NAME_DIFFERENCES.get(id);
    if (names ? r.fn !== names[0] || d.fn !== names[1] : r.fn !== d.fn)
      problems.push(`${id}: name ${r.fn} vs ${d.fn}`);
    if (r.member !== d.o.member && !STYLE_DIFFERENCES.has(id))
      problems.push(`${id}: ${r.member ? "member" : "global"} vs ${d.o.member ? "member" : "global"}`);
    if (r.arity !== d.o.args.length) problems.push(`${id}: arity ${r.arity} vs ${d.o.args.length}`);
  }
  assert.deepEqual(problems, []);
});

test("decls: the listed style differences are real (a fixed one must leave the list)", () => {
  for (const id of STYLE_DIFFERENCES.keys())
    assert.notEqual(runtime.get(id)?.member, declared.get(id)?.o.member, id);
});

test("decls: overload ids are unique across the typed libraries", () => {
  const seen = new Set<string>();
  const dupes: string[] = [];
  for (const lib of ALL_DECLS)
    for (const f of lib.functions)
      for (const o of f.overloads) {
        if (seen.has(o.id)) dupes.push(o.id);
        seen.add(o.id);
      }
  assert.deepEqual(dupes, []);
});

test("decls: Kubernetes' lists library declares sum, min and max per element type (library/lists.go)", () => {
  assert.deepEqual(
    ALL_DECLS.flatMap((l) => l.functions)
      .filter((f) => f.name === "sum")
      .flatMap((f) => f.overloads.map((o) => o.id)),
    ["list_int_sum_int", "list_uint_sum_uint", "list_double_sum_double", "list_duration_sum_duration"],
  );
});

test("decls: OVERLOADS_BY_ID finds each typed overload with its function and library", () => {
  assert.equal(OVERLOADS_BY_ID.size, declared.size);
  assert.equal(OVERLOADS_BY_ID.get("add_list")?.function, "_+_");
  assert.equal(OVERLOADS_BY_ID.get("@mapInsert_map_map")?.function, "cel.@mapInsert");
  assert.equal(OVERLOADS_BY_ID.get("quantity_sign")?.library, "kubernetes.quantity");
});
