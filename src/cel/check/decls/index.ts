/**
 * Every typed declaration, keyed by function name and cel-go overload id, in the order the
 * Kubernetes admission environment registers its libraries (environment/base.go), which is the
 * order overloads of one name are tried in; and how they relate to the runtime's overload tables
 * (src/cel/library), for the join the compiler makes between the two.
 */
import { comprehensionsDecls } from "./comprehensions.ts";
import { encodersDecls, mathDecls } from "./extras.ts";
import {
  authzDecls,
  authzSelectorsDecls,
  cidrDecls,
  formatDecls,
  ipDecls,
  jsonpatchDecls,
  quantityDecls,
  regexDecls,
  semverDecls,
  urlsDecls,
} from "./kubernetes.ts";
import { celListsDecls, kubernetesListsDecls, kubernetesListsV1Decls } from "./lists.ts";
import type { LibraryDecl, OverloadDecl } from "./model.ts";
import { optionalDecls, optionalV2Decls } from "./optional.ts";
import { setsDecls } from "./sets.ts";
import { stdDecls } from "./std.ts";
import { stringsDecls, stringsV2Decls, stringsV3Decls } from "./strings.ts";

export type { FunctionDecl, LibraryDecl, OverloadDecl } from "./model.ts";
export { parseType } from "./model.ts";

/** Every library with typed declarations, in registration order. */
export const ALL_DECLS: readonly LibraryDecl[] = [
  stdDecls,
  urlsDecls,
  regexDecls,
  kubernetesListsDecls,
  authzDecls,
  authzSelectorsDecls,
  optionalDecls,
  optionalV2Decls,
  quantityDecls,
  stringsDecls,
  stringsV2Decls,
  setsDecls,
  ipDecls,
  cidrDecls,
  formatDecls,
  comprehensionsDecls,
  semverDecls,
  celListsDecls,
  kubernetesListsV1Decls,
  jsonpatchDecls,
  stringsV3Decls,
  mathDecls,
  encodersDecls,
];

/**
 * Runtime overload ids (src/cel/library) that are not cel-go's, with the typed overloads they
 * implement. The runtime folds what cel-go declares per element type into one overload that looks
 * at the values, names a few internal functions its own way, and runs math.greatest/least as
 * functions where cel-go has macros over math.@max/@min.
 */
export const RUNTIME_ALIASES: Readonly<Record<string, readonly string[]>> = (() => {
  const comparable = ["int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes"];
  const sortable = [
    "int",
    "uint",
    "double",
    "bool",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
    "string",
    "bytes",
  ];
  const extremes = (op: "min" | "max") => {
    const one = ["double", "int", "uint"].map((t) => `math_@${op}_${t}`);
    const two = [
      "double_double",
      "int_int",
      "uint_uint",
      "int_uint",
      "int_double",
      "double_int",
      "double_uint",
      "uint_int",
      "uint_double",
    ].map((t) => `math_@${op}_${t}`);
    const list = ["double", "int", "uint"].map((t) => `math_@${op}_list_${t}`);
    const name = op === "max" ? "greatest" : "least";
    const out: Record<string, readonly string[]> = {
      [`math_${name}_1`]: [...one, ...list],
      [`math_${name}_2`]: two,
    };
    for (let n = 3; n <= 6; n++) out[`math_${name}_${n}`] = list;
    return out;
  };
  return {
    in_dyn: ["in_list", "in_map"],
    map_insert_key_value: ["@mapInsert_map_key_value"],
    map_insert_map: ["@mapInsert_map_map"],
    list_is_sorted_bool: comparable.map((t) => `list_${t}_is_sorted_bool`),
    list_sum: ["int", "uint", "double", "duration"].map((t) => `list_${t}_sum_${t}`),
    list_min: comparable.map((t) => `list_${t}_min_${t}`),
    list_max: comparable.map((t) => `list_${t}_max_${t}`),
    list_sort: sortable.map((t) => `list_${t}_sort`),
    list_sortByAssociatedKeys: sortable.map((t) => `list_${t}_sortByAssociatedKeys`),
    ...extremes("max"),
    ...extremes("min"),
  };
})();

/**
 * Typed overloads the compiler implements itself (plan/: logic, equality, indexing,
 * optional indexing) rather than through a runtime library table.
 */
export const BUILTIN_OVERLOADS: ReadonlySet<string> = new Set([
  "conditional",
  "logical_and",
  "logical_or",
  "logical_not",
  "not_strictly_false",
  "equals",
  "not_equals",
  "index_list",
  "index_map",
  "optional_list_index_int",
  "optional_map_index_value",
  "list_optindex_optional_int",
  "optional_list_optindex_optional_int",
  "map_optindex_optional_value",
  "optional_map_optindex_optional_value",
]);

export interface DeclaredOverload {
  /** The function's declared name (`_+_`, `optional.of`, `cel.@mapInsert`). */
  readonly function: string;
  readonly library: string;
  readonly overload: OverloadDecl;
}

/** Every typed overload by its id: the checker's side of the join with the runtime's tables. */
export const OVERLOADS_BY_ID: ReadonlyMap<string, DeclaredOverload> = new Map(
  ALL_DECLS.flatMap((lib) =>
    lib.functions.flatMap((f) =>
      f.overloads.map((o) => [o.id, { function: f.name, library: lib.name, overload: o }] as const),
    ),
  ),
);
