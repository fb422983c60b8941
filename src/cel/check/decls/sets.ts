/** cel-go's sets extension (ext/sets.go), which Kubernetes enables from 1.29. */
import { fn, global, type LibraryDecl } from "./model.ts";

export const setsDecls: LibraryDecl = {
  name: "sets",
  kubernetes: "1.29",
  functions: [
    fn("sets.contains", global("list_sets_contains_list", "(list(T), list(T)) -> bool")),
    fn("sets.equivalent", global("list_sets_equivalent_list", "(list(T), list(T)) -> bool")),
    fn("sets.intersects", global("list_sets_intersects_list", "(list(T), list(T)) -> bool")),
  ],
};
