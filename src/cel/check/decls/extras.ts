/**
 * cel-go extensions Kubernetes does not enable, which celgate offers as opt-in extras: the math
 * extension (ext/math.go, latest version) and the encoders (ext/encoders.go). `cel.bind`
 * (ext/bindings.go) is a macro only; syntax/parse.ts expands it.
 */
import { fn, global, type LibraryDecl, type OverloadDecl } from "./model.ts";

/** `math.@min` / `math.@max`, which the math.least / math.greatest macros call. */
function extremes(op: "min" | "max"): OverloadDecl[] {
  const o = (types: string, sig: string) => global(`math_@${op}_${types}`, sig);
  return [
    o("double", "(double) -> double"),
    o("int", "(int) -> int"),
    o("uint", "(uint) -> uint"),
    o("double_double", "(double, double) -> double"),
    o("int_int", "(int, int) -> int"),
    o("uint_uint", "(uint, uint) -> uint"),
    o("int_uint", "(int, uint) -> dyn"),
    o("int_double", "(int, double) -> dyn"),
    o("double_int", "(double, int) -> dyn"),
    o("double_uint", "(double, uint) -> dyn"),
    o("uint_int", "(uint, int) -> dyn"),
    o("uint_double", "(uint, double) -> dyn"),
    o("list_double", "(list(double)) -> double"),
    o("list_int", "(list(int)) -> int"),
    o("list_uint", "(list(uint)) -> uint"),
  ];
}

function numeric(name: string, result: (t: string) => string): ReturnType<typeof fn> {
  return fn(
    `math.${name}`,
    global(`math_${name}_double`, `(double) -> ${result("double")}`),
    global(`math_${name}_int`, `(int) -> ${result("int")}`),
    global(`math_${name}_uint`, `(uint) -> ${result("uint")}`),
  );
}

function bitwise(name: string): ReturnType<typeof fn> {
  return fn(
    `math.${name}`,
    global(`math_${name}_int_int`, "(int, int) -> int"),
    global(`math_${name}_uint_uint`, "(uint, uint) -> uint"),
  );
}

export const mathDecls: LibraryDecl = {
  name: "math",
  kubernetes: "none",
  extra: "math",
  functions: [
    fn("math.@min", ...extremes("min")),
    fn("math.@max", ...extremes("max")),
    fn("math.ceil", global("math_ceil_double", "(double) -> double")),
    fn("math.floor", global("math_floor_double", "(double) -> double")),
    fn("math.round", global("math_round_double", "(double) -> double")),
    fn("math.trunc", global("math_trunc_double", "(double) -> double")),
    fn("math.isInf", global("math_isInf_double", "(double) -> bool")),
    fn("math.isNaN", global("math_isNaN_double", "(double) -> bool")),
    fn("math.isFinite", global("math_isFinite_double", "(double) -> bool")),
    numeric("abs", (t) => t),
    numeric("sign", (t) => t),
    bitwise("bitAnd"),
    bitwise("bitOr"),
    bitwise("bitXor"),
    fn(
      "math.bitNot",
      global("math_bitNot_int_int", "(int) -> int"),
      global("math_bitNot_uint_uint", "(uint) -> uint"),
    ),
    fn(
      "math.bitShiftLeft",
      global("math_bitShiftLeft_int_int", "(int, int) -> int"),
      global("math_bitShiftLeft_uint_int", "(uint, int) -> uint"),
    ),
    fn(
      "math.bitShiftRight",
      global("math_bitShiftRight_int_int", "(int, int) -> int"),
      global("math_bitShiftRight_uint_int", "(uint, int) -> uint"),
    ),
    numeric("sqrt", () => "double"),
  ],
};

export const encodersDecls: LibraryDecl = {
  name: "encoders",
  kubernetes: "none",
  extra: "base64",
  functions: [
    fn("base64.decode", global("base64_decode_string", "(string) -> bytes")),
    fn("base64.encode", global("base64_encode_bytes", "(bytes) -> string")),
  ],
};
