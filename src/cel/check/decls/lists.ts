/**
 * List functions: Kubernetes' lists library (k8s.io/apiserver/pkg/cel/library/lists.go, base
 * environment) with one overload per element type, and cel-go's lists extension at version 3
 * (ext/lists.go), which Kubernetes enables from 1.34.
 */
import { fn, type FunctionDecl, global, type LibraryDecl, member, type OverloadDecl } from "./model.ts";

/** Kubernetes' comparableTypes and summableTypes: (id name, CEL type). */
const COMPARABLE: readonly (readonly [string, string])[] = [
  ["int", "int"],
  ["uint", "uint"],
  ["double", "double"],
  ["bool", "bool"],
  ["duration", "duration"],
  ["timestamp", "timestamp"],
  ["string", "string"],
  ["bytes", "bytes"],
];
const SUMMABLE: readonly (readonly [string, string])[] = [
  ["int", "int"],
  ["uint", "uint"],
  ["double", "double"],
  ["duration", "duration"],
];

function perType(
  name: string,
  types: readonly (readonly [string, string])[],
  make: (id: string, t: string) => OverloadDecl,
): FunctionDecl {
  return fn(name, ...types.map(([id, t]) => make(id, t)));
}

export const kubernetesListsDecls: LibraryDecl = {
  name: "kubernetes.lists",
  kubernetes: "1.0",
  functions: [
    perType("isSorted", COMPARABLE, (n, t) => member(`list_${n}_is_sorted_bool`, `list(${t}).() -> bool`)),
    perType("sum", SUMMABLE, (n, t) => member(`list_${n}_sum_${n}`, `list(${t}).() -> ${t}`)),
    perType("max", COMPARABLE, (n, t) => member(`list_${n}_max_${n}`, `list(${t}).() -> ${t}`)),
    perType("min", COMPARABLE, (n, t) => member(`list_${n}_min_${n}`, `list(${t}).() -> ${t}`)),
    fn("indexOf", member("list_a_index_of_int", "list(A).(A) -> int")),
    fn("lastIndexOf", member("list_a_last_index_of_int", "list(A).(A) -> int")),
  ],
};

/**
 * Kubernetes' lists library at version 1 (library/lists.go ListsVersion(1), base.go IntroducedVersion
 * 1.37, so in new expressions from 1.38): `includes`, true when the receiver is a list holding the
 * argument or, any other receiver, equal to it.
 */
export const kubernetesListsV1Decls: LibraryDecl = {
  name: "kubernetes.lists.v1",
  kubernetes: "1.37",
  functions: [fn("includes", member("list_includes_dyn_dyn", "dyn.(dyn) -> bool"))],
};

/** cel-go's comparableTypes, whose runtime type names make the sort overload ids. */
const SORTABLE: readonly string[] = [
  "int",
  "uint",
  "double",
  "bool",
  "google.protobuf.Duration",
  "google.protobuf.Timestamp",
  "string",
  "bytes",
];

export const celListsDecls: LibraryDecl = {
  name: "lists",
  kubernetes: "1.34",
  functions: [
    fn("slice", member("list_slice", "list(T).(int, int) -> list(T)")),
    fn(
      "flatten",
      member("list_flatten", "list(list(T)).() -> list(T)"),
      member("list_flatten_int", "list(dyn).(int) -> list(dyn)"),
    ),
    fn("sort", ...SORTABLE.map((t) => member(`list_${t}_sort`, `list(${t}).() -> list(${t})`))),
    // The sortBy macro's target: a member call in cel-go, written as a global call by syntax/parse.ts.
    fn(
      "@sortByAssociatedKeys",
      ...SORTABLE.map((t) => member(`list_${t}_sortByAssociatedKeys`, `list(T).(list(${t})) -> list(T)`)),
    ),
    fn("lists.range", global("lists_range", "(int) -> list(int)")),
    fn("reverse", member("list_reverse", "list(T).() -> list(T)")),
    fn("distinct", member("list_distinct", "list(T).() -> list(T)")),
  ],
};
