/**
 * cel-go's optional library (cel/library.go, OptionalTypes, which Kubernetes enables from 1.28):
 * constructors, accessors, and the optional forms of indexing. `a.?b` is checked as a field
 * selection (checker.go checkOptSelect) and resolves to `select_optional_field`.
 */
import { fn, global, type LibraryDecl, member } from "./model.ts";

export const optionalDecls: LibraryDecl = {
  name: "optional",
  kubernetes: "1.28",
  functions: [
    fn("optional.of", global("optional_of", "(V) -> optional_type(V)")),
    fn("optional.ofNonZeroValue", global("optional_ofNonZeroValue", "(V) -> optional_type(V)")),
    fn("optional.none", global("optional_none", "() -> optional_type(V)")),
    fn("value", member("optional_value", "optional_type(V).() -> V")),
    fn("hasValue", member("optional_hasValue", "optional_type(V).() -> bool")),
    fn("or", member("optional_or_optional", "optional_type(V).(optional_type(V)) -> optional_type(V)")),
    fn("orValue", member("optional_orValue_value", "optional_type(V).(V) -> V")),
    fn(
      "_[?_]",
      global("list_optindex_optional_int", "(list(V), int) -> optional_type(V)"),
      global("optional_list_optindex_optional_int", "(optional_type(list(V)), int) -> optional_type(V)"),
      global("map_optindex_optional_value", "(map(K, V), K) -> optional_type(V)"),
      global("optional_map_optindex_optional_value", "(optional_type(map(K, V)), K) -> optional_type(V)"),
    ),
    fn(
      "_[_]",
      global("optional_list_index_int", "(optional_type(list(V)), int) -> optional_type(V)"),
      global("optional_map_index_value", "(optional_type(map(K, V)), K) -> optional_type(V)"),
    ),
  ],
};

/**
 * What version 2 of the library adds (cel-go v0.23, so Kubernetes 1.33: base.go enables
 * `cel.OptionalTypes()` without a version, which gives the newest the vendored cel-go has).
 */
export const optionalV2Decls: LibraryDecl = {
  name: "optional.v2",
  kubernetes: "1.33",
  functions: [
    fn("first", member("list_first", "list(V).() -> optional_type(V)")),
    fn("last", member("list_last", "list(V).() -> optional_type(V)")),
    fn("optional.unwrap", global("optional_unwrap", "(list(optional_type(V))) -> list(V)")),
    fn("unwrapOpt", member("optional_unwrapOpt", "list(optional_type(V)).() -> list(V)")),
  ],
};
