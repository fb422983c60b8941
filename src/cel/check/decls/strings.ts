/**
 * cel-go's strings extension (ext/strings.go) as Kubernetes enables it: version 0 in the base
 * environment, version 2 from 1.29, which adds `format` and `strings.quote` (and whose `join`
 * differs only at run time). `reverse` on strings is version 3: celgate runs it, Kubernetes does
 * not declare it, so it is a library of its own that no Kubernetes environment enables.
 */
import { fn, global, type LibraryDecl, member } from "./model.ts";

export const stringsDecls: LibraryDecl = {
  name: "strings",
  kubernetes: "1.0",
  functions: [
    fn("charAt", member("string_char_at_int", "string.(int) -> string")),
    fn(
      "indexOf",
      member("string_index_of_string", "string.(string) -> int"),
      member("string_index_of_string_int", "string.(string, int) -> int"),
    ),
    fn(
      "lastIndexOf",
      member("string_last_index_of_string", "string.(string) -> int"),
      member("string_last_index_of_string_int", "string.(string, int) -> int"),
    ),
    fn("lowerAscii", member("string_lower_ascii", "string.() -> string")),
    fn(
      "replace",
      member("string_replace_string_string", "string.(string, string) -> string"),
      member("string_replace_string_string_int", "string.(string, string, int) -> string"),
    ),
    fn(
      "split",
      member("string_split_string", "string.(string) -> list(string)"),
      member("string_split_string_int", "string.(string, int) -> list(string)"),
    ),
    fn(
      "substring",
      member("string_substring_int", "string.(int) -> string"),
      member("string_substring_int_int", "string.(int, int) -> string"),
    ),
    fn("trim", member("string_trim", "string.() -> string")),
    fn("upperAscii", member("string_upper_ascii", "string.() -> string")),
    fn(
      "join",
      member("list_join", "list(string).() -> string"),
      member("list_join_string", "list(string).(string) -> string"),
    ),
  ],
};

/** What version 2 adds to version 0 (Kubernetes 1.29). */
export const stringsV2Decls: LibraryDecl = {
  name: "strings.v2",
  kubernetes: "1.29",
  functions: [
    fn("format", member("string_format", "string.(list(dyn)) -> string")),
    fn("strings.quote", global("strings_quote", "(string) -> string")),
  ],
};

/** Strings extension version 3's `reverse`: celgate has it, Kubernetes (version 2) does not. */
export const stringsV3Decls: LibraryDecl = {
  name: "strings.v3",
  kubernetes: "none",
  functions: [fn("reverse", member("string_reverse", "string.() -> string"))],
};
