/**
 * cel-go's two-variable comprehensions (ext/comprehensions.go), which Kubernetes enables from 1.32:
 * the macros are expanded by syntax/parse.ts; `transformMap` and `transformMapEntry` call this function.
 */
import { fn, global, type LibraryDecl } from "./model.ts";

export const comprehensionsDecls: LibraryDecl = {
  name: "comprehensions",
  kubernetes: "1.32",
  functions: [
    fn(
      "cel.@mapInsert",
      global("@mapInsert_map_key_value", "(map(K, V), K, V) -> map(K, V)"),
      global("@mapInsert_map_map", "(map(K, V), map(K, V)) -> map(K, V)"),
    ),
  ],
};
