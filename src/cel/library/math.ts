/**
 * cel-go's math extension (ext/math.go, latest version): greatest/least, rounding, signedness,
 * floating-point predicates, bitwise operations and sqrt. Not part of the Kubernetes environment.
 *
 * cel-go turns `math.greatest(a, b, c)` into an internal `math.@max` call with a macro; here
 * `math.greatest` and `math.least` are ordinary functions of 1 to 6 arguments of any type, which
 * check at run time that every argument is a number (or, alone, a list of numbers). Mixed numeric
 * types compare by value, and the winning argument is returned with its own type.
 */
import { celCompare } from "../runtime/equality.ts";
import { CelError, type CelList, type CelValue, checkInt, noSuchOverload, UInt } from "../runtime/values.ts";
import { fn, globalFn, type Library, type Overload } from "./types.ts";

type Num = bigint | number | UInt;

function isNum(v: CelValue): v is Num {
  return typeof v === "bigint" || typeof v === "number" || v instanceof UInt;
}

/** cel-go's Compare on numbers, where NaN cannot be ordered. */
function compareNums(a: Num, b: Num): number {
  const c = celCompare(a, b);
  if (Number.isNaN(c)) throw new CelError("NaN values cannot be ordered");
  return c;
}

/** The first of the values unless a later one is strictly better; `better` is the wanted sign. */
function pick(values: readonly Num[], better: 1 | -1): Num {
  let result = values[0] as Num;
  for (let i = 1; i < values.length; i++) {
    const next = values[i] as Num;
    if (compareNums(next, result) === better) result = next;
  }
  return result;
}

function extreme(name: "math.greatest" | "math.least", args: readonly CelValue[]): CelValue {
  const better = name === "math.greatest" ? 1 : -1;
  const internal = name === "math.greatest" ? "math.@max" : "math.@min";
  if (args.length === 1) {
    const only = args[0] as CelValue;
    if (isNum(only)) return only;
    if (Array.isArray(only)) {
      const list = only as CelList;
      if (list.length === 0) throw new CelError(`${internal}(list) argument must not be empty`);
      if (!list.every(isNum)) throw noSuchOverload(name, list);
      return pick(list as readonly Num[], better);
    }
    throw noSuchOverload(name, args);
  }
  if (!args.every(isNum)) throw noSuchOverload(name, args);
  return pick(args as readonly Num[], better);
}

const MAX_VARIADIC = 6;

function variadic(name: "math.greatest" | "math.least"): Overload[] {
  const out: Overload[] = [];
  for (let n = 1; n <= MAX_VARIADIC; n++) {
    out.push(
      globalFn(
        `${name.replace(".", "_")}_${n}`,
        Array.from({ length: n }, () => "dyn"),
        "dyn",
        (...args: CelValue[]) =>
          // The evaluator passes its CallContext after the arguments.
          extreme(name, args.slice(0, n)),
      ),
    );
  }
  return out;
}

/** Go's math.Round: halves away from zero. */
function roundHalfAwayFromZero(x: number): number {
  if (!Number.isFinite(x)) return x;
  const r = Math.round(Math.abs(x));
  return x < 0 || Object.is(x, -0) ? -r : r;
}

const INT64_MIN = -(2n ** 63n);
const UINT64_MASK = 2n ** 64n - 1n;

function absInt(v: bigint): bigint {
  if (v === INT64_MIN) throw new CelError("integer overflow");
  return v < 0n ? -v : v;
}

function signDouble(v: number): number {
  if (Number.isNaN(v)) return v;
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

function shiftLeftInt(v: bigint, bits: bigint): bigint {
  if (bits < 0n) throw new CelError(`math.bitShiftLeft() negative offset: ${bits}`);
  return bits >= 64n ? 0n : BigInt.asIntN(64, v << bits);
}

function shiftLeftUint(v: UInt, bits: bigint): UInt {
  if (bits < 0n) throw new CelError(`math.bitShiftLeft() negative offset: ${bits}`);
  return new UInt(bits >= 64n ? 0n : BigInt.asUintN(64, v.value << bits));
}

/** Shifts the 64-bit pattern, filling with zeros: `math.bitShiftRight(-1024, 3)` is 2305843009213693824. */
function shiftRightInt(v: bigint, bits: bigint): bigint {
  if (bits < 0n) throw new CelError(`math.bitShiftRight() negative offset: ${bits}`);
  return bits >= 64n ? 0n : BigInt.asIntN(64, BigInt.asUintN(64, v) >> bits);
}

function shiftRightUint(v: UInt, bits: bigint): UInt {
  if (bits < 0n) throw new CelError(`math.bitShiftRight() negative offset: ${bits}`);
  return new UInt(bits >= 64n ? 0n : v.value >> bits);
}

const unaryDouble = (name: string, id: string, result: string, f: (x: number) => CelValue) =>
  fn(name, globalFn(id, ["double"], result, f));

export const mathLibrary: Library = {
  name: "math",
  availability: "extra",
  functions: [
    fn("math.greatest", ...variadic("math.greatest")),
    fn("math.least", ...variadic("math.least")),
    unaryDouble("math.ceil", "math_ceil_double", "double", Math.ceil),
    unaryDouble("math.floor", "math_floor_double", "double", Math.floor),
    unaryDouble("math.round", "math_round_double", "double", roundHalfAwayFromZero),
    unaryDouble("math.trunc", "math_trunc_double", "double", Math.trunc),
    unaryDouble("math.isInf", "math_isInf_double", "bool", (x) => x === Infinity || x === -Infinity),
    unaryDouble("math.isNaN", "math_isNaN_double", "bool", Number.isNaN),
    unaryDouble("math.isFinite", "math_isFinite_double", "bool", Number.isFinite),
    fn(
      "math.abs",
      globalFn("math_abs_double", ["double"], "double", Math.abs),
      globalFn("math_abs_int", ["int"], "int", absInt),
      globalFn("math_abs_uint", ["uint"], "uint", (v: UInt) => v),
    ),
    fn(
      "math.sign",
      globalFn("math_sign_double", ["double"], "double", signDouble),
      globalFn("math_sign_int", ["int"], "int", (v: bigint) => (v > 0n ? 1n : v < 0n ? -1n : 0n)),
      globalFn("math_sign_uint", ["uint"], "uint", (v: UInt) => new UInt(v.value === 0n ? 0n : 1n)),
    ),
    fn(
      "math.sqrt",
      globalFn("math_sqrt_double", ["double"], "double", Math.sqrt),
      globalFn("math_sqrt_int", ["int"], "double", (v: bigint) => Math.sqrt(Number(v))),
      globalFn("math_sqrt_uint", ["uint"], "double", (v: UInt) => Math.sqrt(Number(v.value))),
    ),
    fn(
      "math.bitAnd",
      globalFn("math_bitAnd_int_int", ["int", "int"], "int", (a: bigint, b: bigint) => a & b),
      globalFn(
        "math_bitAnd_uint_uint",
        ["uint", "uint"],
        "uint",
        (a: UInt, b: UInt) => new UInt(a.value & b.value),
      ),
    ),
    fn(
      "math.bitOr",
      globalFn("math_bitOr_int_int", ["int", "int"], "int", (a: bigint, b: bigint) => a | b),
      globalFn(
        "math_bitOr_uint_uint",
        ["uint", "uint"],
        "uint",
        (a: UInt, b: UInt) => new UInt(a.value | b.value),
      ),
    ),
    fn(
      "math.bitXor",
      globalFn("math_bitXor_int_int", ["int", "int"], "int", (a: bigint, b: bigint) => a ^ b),
      globalFn(
        "math_bitXor_uint_uint",
        ["uint", "uint"],
        "uint",
        (a: UInt, b: UInt) => new UInt(a.value ^ b.value),
      ),
    ),
    fn(
      "math.bitNot",
      globalFn("math_bitNot_int_int", ["int"], "int", (a: bigint) => checkInt(~a)),
      globalFn("math_bitNot_uint_uint", ["uint"], "uint", (a: UInt) => new UInt(a.value ^ UINT64_MASK)),
    ),
    fn(
      "math.bitShiftLeft",
      globalFn("math_bitShiftLeft_int_int", ["int", "int"], "int", shiftLeftInt),
      globalFn("math_bitShiftLeft_uint_int", ["uint", "int"], "uint", shiftLeftUint),
    ),
    fn(
      "math.bitShiftRight",
      globalFn("math_bitShiftRight_int_int", ["int", "int"], "int", shiftRightInt),
      globalFn("math_bitShiftRight_uint_int", ["uint", "int"], "uint", shiftRightUint),
    ),
  ],
};
