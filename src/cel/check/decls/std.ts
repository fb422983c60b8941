/**
 * The standard library's declarations, in cel-go's order (common/stdlib/standard.go): the order
 * decides which overload's result type wins when several match and the names of fresh type
 * variables in messages, so it follows upstream.
 */
import { fn, type FunctionDecl, global, type LibraryDecl, member } from "./model.ts";

/** The six relations share their overload set, named `<prefix>_<types>`. */
function relation(name: string, prefix: string): FunctionDecl {
  const o = (types: string, sig: string) => global(`${prefix}_${types}`, `${sig} -> bool`);
  return fn(
    name,
    o("bool", "(bool, bool)"),
    o("int64", "(int, int)"),
    o("int64_double", "(int, double)"),
    o("int64_uint64", "(int, uint)"),
    o("uint64", "(uint, uint)"),
    o("uint64_double", "(uint, double)"),
    o("uint64_int64", "(uint, int)"),
    o("double", "(double, double)"),
    o("double_int64", "(double, int)"),
    o("double_uint64", "(double, uint)"),
    o("string", "(string, string)"),
    o("bytes", "(bytes, bytes)"),
    o("timestamp", "(timestamp, timestamp)"),
    o("duration", "(duration, duration)"),
  );
}

/** A timestamp accessor and its time-zone form; some also take a duration. */
function timeAccessor(name: string, utc: string, tz: string, duration?: string): FunctionDecl {
  const overloads = [member(utc, "timestamp.() -> int"), member(tz, "timestamp.(string) -> int")];
  if (duration) overloads.push(member(duration, "duration.() -> int"));
  return fn(name, ...overloads);
}

export const stdDecls: LibraryDecl = {
  name: "stdlib",
  kubernetes: "1.0",
  functions: [
    fn("_?_:_", global("conditional", "(bool, A, A) -> A")),
    fn("_&&_", global("logical_and", "(bool, bool) -> bool")),
    fn("_||_", global("logical_or", "(bool, bool) -> bool")),
    fn("!_", global("logical_not", "(bool) -> bool")),
    fn("@not_strictly_false", global("not_strictly_false", "(bool) -> bool")),
    fn("_==_", global("equals", "(A, A) -> bool")),
    fn("_!=_", global("not_equals", "(A, A) -> bool")),
    fn(
      "_+_",
      global("add_bytes", "(bytes, bytes) -> bytes"),
      global("add_double", "(double, double) -> double"),
      global("add_duration_duration", "(duration, duration) -> duration"),
      global("add_duration_timestamp", "(duration, timestamp) -> timestamp"),
      global("add_timestamp_duration", "(timestamp, duration) -> timestamp"),
      global("add_int64", "(int, int) -> int"),
      global("add_list", "(list(A), list(A)) -> list(A)"),
      global("add_string", "(string, string) -> string"),
      global("add_uint64", "(uint, uint) -> uint"),
    ),
    fn(
      "_/_",
      global("divide_double", "(double, double) -> double"),
      global("divide_int64", "(int, int) -> int"),
      global("divide_uint64", "(uint, uint) -> uint"),
    ),
    fn("_%_", global("modulo_int64", "(int, int) -> int"), global("modulo_uint64", "(uint, uint) -> uint")),
    fn(
      "_*_",
      global("multiply_double", "(double, double) -> double"),
      global("multiply_int64", "(int, int) -> int"),
      global("multiply_uint64", "(uint, uint) -> uint"),
    ),
    fn("-_", global("negate_double", "(double) -> double"), global("negate_int64", "(int) -> int")),
    fn(
      "_-_",
      global("subtract_double", "(double, double) -> double"),
      global("subtract_duration_duration", "(duration, duration) -> duration"),
      global("subtract_int64", "(int, int) -> int"),
      global("subtract_timestamp_duration", "(timestamp, duration) -> timestamp"),
      global("subtract_timestamp_timestamp", "(timestamp, timestamp) -> duration"),
      global("subtract_uint64", "(uint, uint) -> uint"),
    ),
    relation("_<_", "less"),
    relation("_<=_", "less_equals"),
    relation("_>_", "greater"),
    relation("_>=_", "greater_equals"),
    fn("_[_]", global("index_list", "(list(A), int) -> A"), global("index_map", "(map(A, B), A) -> B")),
    fn("@in", global("in_list", "(A, list(A)) -> bool"), global("in_map", "(A, map(A, B)) -> bool")),
    fn(
      "size",
      global("size_bytes", "(bytes) -> int"),
      member("bytes_size", "bytes.() -> int"),
      global("size_list", "(list(A)) -> int"),
      member("list_size", "list(A).() -> int"),
      global("size_map", "(map(A, B)) -> int"),
      member("map_size", "map(A, B).() -> int"),
      global("size_string", "(string) -> int"),
      member("string_size", "string.() -> int"),
    ),
    fn("type", global("type", "(A) -> type(A)")),
    fn("bool", global("bool_to_bool", "(bool) -> bool"), global("string_to_bool", "(string) -> bool")),
    fn("bytes", global("bytes_to_bytes", "(bytes) -> bytes"), global("string_to_bytes", "(string) -> bytes")),
    fn(
      "double",
      global("double_to_double", "(double) -> double"),
      global("int64_to_double", "(int) -> double"),
      global("string_to_double", "(string) -> double"),
      global("uint64_to_double", "(uint) -> double"),
    ),
    fn(
      "duration",
      global("duration_to_duration", "(duration) -> duration"),
      // Declared up to cel-go v0.28.0 (the versions Kubernetes ships), though it fails when run;
      // the duration literal validator rejects it as a literal.
      global("int64_to_duration", "(int) -> duration"),
      global("string_to_duration", "(string) -> duration"),
    ),
    fn("dyn", global("to_dyn", "(A) -> dyn")),
    fn(
      "int",
      global("int64_to_int64", "(int) -> int"),
      global("double_to_int64", "(double) -> int"),
      global("duration_to_int64", "(duration) -> int"),
      global("string_to_int64", "(string) -> int"),
      global("timestamp_to_int64", "(timestamp) -> int"),
      global("uint64_to_int64", "(uint) -> int"),
    ),
    fn(
      "string",
      global("string_to_string", "(string) -> string"),
      global("bool_to_string", "(bool) -> string"),
      global("bytes_to_string", "(bytes) -> string"),
      global("double_to_string", "(double) -> string"),
      global("duration_to_string", "(duration) -> string"),
      global("int64_to_string", "(int) -> string"),
      global("timestamp_to_string", "(timestamp) -> string"),
      global("uint64_to_string", "(uint) -> string"),
    ),
    fn(
      "timestamp",
      global("timestamp_to_timestamp", "(timestamp) -> timestamp"),
      global("int64_to_timestamp", "(int) -> timestamp"),
      global("string_to_timestamp", "(string) -> timestamp"),
    ),
    fn(
      "uint",
      global("uint64_to_uint64", "(uint) -> uint"),
      global("double_to_uint64", "(double) -> uint"),
      global("int64_to_uint64", "(int) -> uint"),
      global("string_to_uint64", "(string) -> uint"),
    ),
    fn("contains", member("contains_string", "string.(string) -> bool")),
    fn("endsWith", member("ends_with_string", "string.(string) -> bool")),
    fn("startsWith", member("starts_with_string", "string.(string) -> bool")),
    fn(
      "matches",
      global("matches", "(string, string) -> bool"),
      member("matches_string", "string.(string) -> bool"),
    ),
    timeAccessor("getFullYear", "timestamp_to_year", "timestamp_to_year_with_tz"),
    timeAccessor("getMonth", "timestamp_to_month", "timestamp_to_month_with_tz"),
    timeAccessor("getDayOfYear", "timestamp_to_day_of_year", "timestamp_to_day_of_year_with_tz"),
    timeAccessor("getDayOfMonth", "timestamp_to_day_of_month", "timestamp_to_day_of_month_with_tz"),
    timeAccessor("getDate", "timestamp_to_day_of_month_1_based", "timestamp_to_day_of_month_1_based_with_tz"),
    timeAccessor("getDayOfWeek", "timestamp_to_day_of_week", "timestamp_to_day_of_week_with_tz"),
    timeAccessor("getHours", "timestamp_to_hours", "timestamp_to_hours_with_tz", "duration_to_hours"),
    timeAccessor("getMinutes", "timestamp_to_minutes", "timestamp_to_minutes_with_tz", "duration_to_minutes"),
    timeAccessor("getSeconds", "timestamp_to_seconds", "timestamp_to_seconds_tz", "duration_to_seconds"),
    timeAccessor(
      "getMilliseconds",
      "timestamp_to_milliseconds",
      "timestamp_to_milliseconds_with_tz",
      "duration_to_milliseconds",
    ),
  ],
};
