/**
 * Kubernetes' quantity library (`quantity`, `isQuantity` and the `kubernetes.Quantity` members),
 * following k8s.io/apimachinery's resource.Quantity: the same grammar and error texts, exact decimal
 * arithmetic, and the canonical form Kubernetes prints ("1024Mi" is "1Gi", "0.1" is "100m").
 *
 * A Kubernetes quantity is held either as a small fixed-point number (an int64 and a power of ten)
 * or, when that does not fit or for fractional binary amounts, as a big decimal. The difference
 * shows: `isInteger()`/`asInteger()` only succeed on the small form at a non-negative power of ten
 * (so `quantity("1.0").isInteger()` is false), and `asApproximateFloat()` rounds the form's own
 * digits. QuantityValue keeps which form Kubernetes would have, and the exact digits it would hold.
 */
import { CelError, CelObject, type CelValue, INT64_MAX, INT64_MIN } from "../runtime/values.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

export type QuantityFormat = "DecimalExponent" | "BinarySI" | "DecimalSI";

const SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
const ERR_FORMAT_WRONG = `quantities must match the regular expression '${SPLIT_RE}'`;
const ERR_NUMERIC = "unable to parse numeric part of quantity";
const ERR_SUFFIX = "unable to parse quantity's suffix";

/** Digits an int64 can always hold, which decides whether parsing can stay in the small form. */
const MAX_INT64_FACTORS = 18;
const NANO = -9;
const MAX_INT32 = 2 ** 31 - 1;
/** Beyond this many digits of alignment, Kubernetes would spend minutes building the number. */
const MAX_ALIGN_DIGITS = 100_000;

function fitsInt64(v: bigint): boolean {
  return v >= INT64_MIN && v <= INT64_MAX;
}

function abs(v: bigint): bigint {
  return v < 0n ? -v : v;
}

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

function digitCount(v: bigint): number {
  return abs(v).toString().length;
}

// Go's math.Pow10: exact table products, so asApproximateFloat rounds exactly as Kubernetes does.
const POW10_TAB = Array.from({ length: 32 }, (_, i) => Number(`1e${i}`));
const POW10_POS32 = Array.from({ length: 10 }, (_, i) => Number(`1e${i * 32}`));
const POW10_NEG32 = Array.from({ length: 11 }, (_, i) => Number(`1e-${i * 32}`));

function goPow10(n: number): number {
  if (n >= 0 && n <= 308) return (POW10_POS32[n >>> 5] as number) * (POW10_TAB[n & 31] as number);
  if (n < 0 && n >= -323) return (POW10_NEG32[-n >>> 5] as number) / (POW10_TAB[-n & 31] as number);
  return n > 0 ? Number.POSITIVE_INFINITY : 0;
}

const DECIMAL_SUFFIXES = new Map<string, number>([
  ["n", -9],
  ["u", -6],
  ["m", -3],
  ["", 0],
  ["k", 3],
  ["M", 6],
  ["G", 9],
  ["T", 12],
  ["P", 15],
  ["E", 18],
]);
const BINARY_SUFFIXES = new Map<string, number>([
  ["Ki", 10],
  ["Mi", 20],
  ["Gi", 30],
  ["Ti", 40],
  ["Pi", 50],
  ["Ei", 60],
]);
const DECIMAL_BY_EXPONENT = new Map([...DECIMAL_SUFFIXES].map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = new Map([...BINARY_SUFFIXES].map(([s, e]) => [e, s]));

/** The base, exponent and format a suffix stands for, or undefined if it is not one. */
function interpretSuffix(
  suffix: string,
): { base: 2 | 10; exponent: number; format: QuantityFormat } | undefined {
  const dec = DECIMAL_SUFFIXES.get(suffix);
  if (dec !== undefined) return { base: 10, exponent: dec, format: "DecimalSI" };
  const bin = BINARY_SUFFIXES.get(suffix);
  if (bin !== undefined) return { base: 2, exponent: bin, format: "BinarySI" };
  if (suffix.length > 1 && (suffix[0] === "e" || suffix[0] === "E")) {
    // Go's ParseInt(s, 10, 64); exponents beyond int32 are rejected rather than truncated.
    const m = /^[+-]?[0-9]+$/.exec(suffix.slice(1));
    if (!m) return undefined;
    const e = BigInt(suffix.slice(1));
    if (e > BigInt(MAX_INT32) || e < -BigInt(MAX_INT32)) return undefined;
    return { base: 10, exponent: Number(e), format: "DecimalExponent" };
  }
  return undefined;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

interface Scanned {
  positive: boolean;
  /** The number as written, sign included, for the big-decimal path. */
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

/** Splits a quantity into sign, integer digits, fraction digits and suffix (Kubernetes' scanner). */
function scan(str: string): Scanned {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === "-") {
    positive = false;
    pos++;
  } else if (str[0] === "+") {
    pos++;
  }
  while (true) {
    if (pos >= end) return { positive, value: "0", num: "0", denom: "", suffix: "" };
    if (str[pos] !== "0") break;
    pos++;
  }
  let i = pos;
  while (isDigit(str[i])) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: "", suffix: "" };
  const num = str.slice(pos, i) || "0";
  pos = i;
  let denom = "";
  if (str[pos] === ".") {
    pos++;
    let j = pos;
    while (isDigit(str[j])) j++;
    if (j >= end) return { positive, value: str, num, denom: str.slice(pos), suffix: "" };
    denom = str.slice(pos, j);
    pos = j;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && "eEinumkKMGTP".includes(str[pos] as string)) pos++;
  if (pos >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  if (str[pos] === "-" || str[pos] === "+") pos++;
  while (isDigit(str[pos])) pos++;
  if (pos >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  throw new CelError(ERR_FORMAT_WRONG);
}

/** |u|·10^exp rounded up (away from zero) to a multiple of 10^target; exact when exp ≥ target. */
function roundUpTo(u: bigint, exp: number, target: number): { u: bigint; exact: boolean } {
  if (exp >= target) return { u: u * pow10(exp - target), exact: true };
  const k = target - exp;
  const sign = u < 0n ? -1n : 1n;
  const a = abs(u);
  if (a === 0n) return { u: 0n, exact: true };
  // A number with fewer digits than are being dropped rounds up to one unit.
  if (digitCount(a) <= k) return { u: sign, exact: false };
  const d = pow10(k);
  const q = a / d;
  const exact = a % d === 0n;
  return { u: sign * (exact ? q : q + 1n), exact };
}

/** Compares u1·10^e1 with u2·10^e2 without building huge powers of ten when magnitudes differ. */
function compareScaled(u1: bigint, e1: number, u2: bigint, e2: number): number {
  const s1 = u1 < 0n ? -1 : u1 > 0n ? 1 : 0;
  const s2 = u2 < 0n ? -1 : u2 > 0n ? 1 : 0;
  if (s1 !== s2) return s1 > s2 ? 1 : -1;
  if (s1 === 0) return 0;
  const m1 = digitCount(u1) + e1;
  const m2 = digitCount(u2) + e2;
  if (m1 !== m2) return m1 > m2 ? s1 : -s1;
  const e = Math.min(e1, e2);
  const a = u1 * pow10(e1 - e);
  const b = u2 * pow10(e2 - e);
  return a < b ? -1 : a > b ? 1 : 0;
}

function alignTo(u: bigint, exp: number, target: number): bigint {
  if (exp - target > MAX_ALIGN_DIGITS)
    throw new CelError("quantity arithmetic exceeds the supported precision");
  return u * pow10(exp - target);
}

/** `kubernetes.Quantity`: a Kubernetes resource quantity. */
export class QuantityValue extends CelObject {
  readonly celType = "kubernetes.Quantity";
  /**
   * @param unscaled the digits; the value is `unscaled × 10^scale`
   * @param big whether Kubernetes holds it as a big decimal rather than an int64 and a scale
   * @param pointer whether Kubernetes holds it behind a pointer: `add` and `sub` return
   *   `&apiservercel.Quantity{…}` where `quantity()` returns the struct, and the struct's `Equal`
   *   only recognises the struct, so a pointer on the right of `==` is never equal (see `equals`)
   */
  constructor(
    readonly unscaled: bigint,
    readonly scale: number,
    readonly format: QuantityFormat,
    readonly big: boolean,
    readonly pointer = false,
  ) {
    super();
  }

  static readonly zero: QuantityValue = new QuantityValue(0n, 0, "DecimalSI", false);

  /** An int as Kubernetes' `add(int)`/`sub(int)` turn it into a quantity. */
  static fromInt(v: bigint): QuantityValue {
    return new QuantityValue(v, 0, "DecimalExponent", false);
  }

  /** resource.ParseQuantity; throws a CelError with Kubernetes' message. */
  static parse(str: string): QuantityValue {
    if (str.length === 0) throw new CelError(ERR_FORMAT_WRONG);
    if (str === "0") return QuantityValue.zero;
    const { positive, value, num, denom, suffix } = scan(str);
    const interpreted = interpretSuffix(suffix);
    if (interpreted === undefined) throw new CelError(ERR_SUFFIX);
    const { base, exponent } = interpreted;
    let { format } = interpreted;

    // Small form: few enough digits to multiply out in an int64.
    let precision: number;
    let scale = 0;
    let mantissa = 1n;
    if (base === 10) {
      scale = exponent;
      precision = MAX_INT64_FACTORS - (num.length + denom.length);
    } else if (denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
    if (precision >= 0) {
      scale -= denom.length;
      if (scale >= NANO) {
        const result = BigInt(num + denom) * mantissa;
        if (fitsInt64(result)) return new QuantityValue(positive ? result : -result, scale, format, false);
      }
    }

    // Big-decimal form.
    const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(value);
    if (!m || (m[2] === "" && (m[3] ?? "") === "")) throw new CelError(ERR_NUMERIC);
    const frac = m[3] ?? "";
    let u = BigInt(`${m[1] === "-" ? "-" : ""}${m[2]}${frac}`);
    let exp = -frac.length;
    if (base === 10) exp += exponent;
    else u *= 1n << BigInt(exponent);
    const negative = u < 0n;
    u = abs(u);
    if (u !== 0n) {
      // Kubernetes rounds any non-zero amount up to a whole number of nanounits, so that asking
      // for a tiny amount of a resource still gets some, and keeps it at that scale.
      // (An amount too large to spell out at nano scale keeps its scale; the value is the same.)
      if (exp - NANO <= MAX_ALIGN_DIGITS) {
        u = roundUpTo(u, exp, NANO).u;
        exp = NANO;
      }
    }
    const maxAllowed = INT64_MAX;
    if (format === "BinarySI" && compareScaled(u, exp, maxAllowed, 0) > 0) {
      u = maxAllowed;
      exp = 0;
    }
    if (format === "BinarySI" && u !== 0n && compareScaled(u, exp, 1n, 0) < 0) format = "DecimalSI";
    return new QuantityValue(negative ? -u : u, exp, format, true);
  }

  sign(): number {
    return this.unscaled < 0n ? -1 : this.unscaled > 0n ? 1 : 0;
  }

  isZero(): boolean {
    return this.unscaled === 0n;
  }

  /** Kubernetes' AsInt64: only the small form at a non-negative scale converts. */
  asInt64(): bigint | undefined {
    if (this.big) return undefined;
    if (this.scale === 0) return this.unscaled;
    if (this.scale < 0) return undefined;
    if (this.unscaled === 0n) return 0n;
    if (this.scale > 19) return undefined;
    const v = this.unscaled * pow10(this.scale);
    return fitsInt64(v) ? v : undefined;
  }

  asApproximateFloat(): number {
    const base = Number(this.unscaled);
    if (this.scale === 0) return base;
    return base * goPow10(this.scale);
  }

  compareTo(other: QuantityValue): number {
    return compareScaled(this.unscaled, this.scale, other.unscaled, other.scale);
  }

  /** Kubernetes' `add`: the sum, held behind a pointer as the library returns it. */
  add(y: QuantityValue): QuantityValue {
    let format = this.format;
    if (!this.big && !y.big) {
      if (this.unscaled === 0n) format = y.format;
      const small = addSmall(this.unscaled, this.scale, y.unscaled, y.scale);
      if (small) return new QuantityValue(small[0], small[1], format, false, true);
    } else if (this.isZero()) {
      format = y.format;
    }
    return addBig(this.unscaled, this.scale, y.unscaled, y.scale, format);
  }

  /** Kubernetes' `sub`: the difference, held behind a pointer as the library returns it. */
  sub(y: QuantityValue): QuantityValue {
    const format = this.isZero() ? y.format : this.format;
    if (!this.big && !y.big && y.unscaled !== INT64_MIN) {
      const small = addSmall(this.unscaled, this.scale, -y.unscaled, y.scale);
      if (small) return new QuantityValue(small[0], small[1], format, false, true);
    }
    return addBig(this.unscaled, this.scale, -y.unscaled, y.scale, format);
  }

  /**
   * `this == other` as cel-go asks it, `this.Equal(other)`: apiservercel.Quantity's Equal type-asserts
   * `other.(Quantity)`, which a `*Quantity` (what `add` and `sub` return) fails, so a result of
   * arithmetic on the right is unequal to everything, itself included, whatever the amounts.
   */
  equals(other: CelValue): boolean {
    return other instanceof QuantityValue && !other.pointer && this.compareTo(other) === 0;
  }

  /** The canonical form, as Kubernetes serializes a quantity. */
  override toString(): string {
    if (this.unscaled === 0n) return "0";
    let format = this.format;
    let whole: bigint | undefined;
    if (format === "BinarySI") {
      if (
        compareScaled(this.unscaled, this.scale, -1024n, 0) > 0 &&
        compareScaled(this.unscaled, this.scale, 1024n, 0) < 0
      ) {
        format = "DecimalSI";
      } else {
        const r = roundUpTo(this.unscaled, this.scale, 0);
        // Printing in binary units would lose the fraction; print in decimal instead.
        if (r.exact) whole = r.u;
        else format = "DecimalSI";
      }
    }
    if (format === "BinarySI" && whole !== undefined) {
      let amount = abs(whole);
      let times = 0;
      while (amount >= 1024n && amount % 1024n === 0n) {
        amount /= 1024n;
        times++;
      }
      const sign = whole < 0n ? "-" : "";
      if (times === 0) return `${sign}${amount}`;
      const suffix = BINARY_BY_EXPONENT.get(times * 10);
      if (suffix !== undefined) return `${sign}${amount}${suffix}`;
      // No binary suffix past Ei: fall back to exponent notation rather than drop the magnitude.
      return decimalCanonical(whole, 0, "DecimalExponent");
    }
    return decimalCanonical(this.unscaled, this.scale, format);
  }

  toJSON(): string {
    return this.toString();
  }
}

/** The base-10 canonical text: no trailing zeros in the digits, exponent a multiple of three. */
function decimalCanonical(unscaled: bigint, scale: number, format: QuantityFormat): string {
  // Moving trailing zeros into the exponent by text keeps this linear for very long numbers.
  const digits = unscaled.toString();
  let zeros = 0;
  while (zeros < digits.length - 1 && digits[digits.length - 1 - zeros] === "0") zeros++;
  let amount = zeros === 0 ? unscaled : BigInt(digits.slice(0, -zeros));
  let exponent = scale + zeros;
  const r = ((exponent % 3) + 3) % 3;
  if (r !== 0) {
    amount *= pow10(r);
    exponent -= r;
  }
  if (format === "DecimalSI") {
    const suffix = DECIMAL_BY_EXPONENT.get(exponent);
    // DecimalSI has no suffix outside n..E; Kubernetes falls back to exponent notation there.
    if (suffix !== undefined) return `${amount}${suffix}`;
  }
  return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
}

/** int64Amount.Add: the sum in the small form, or undefined when it would overflow. */
function addSmall(a: bigint, as: number, b: bigint, bs: number): [bigint, number] | undefined {
  if (b === 0n) return [a, as];
  if (a === 0n) return [b, bs];
  let sum: bigint;
  let scale: number;
  if (as === bs) {
    sum = a + b;
    scale = as;
  } else if (as > bs) {
    if (as - bs > 19) return undefined;
    const c = a * pow10(as - bs);
    if (!fitsInt64(c)) return undefined;
    sum = c + b;
    scale = bs;
  } else {
    if (bs - as > 19) return undefined;
    const c = b * pow10(bs - as);
    if (!fitsInt64(c)) return undefined;
    sum = a + c;
    scale = as;
  }
  return fitsInt64(sum) ? [sum, scale] : undefined;
}

/** inf.Dec addition: the result keeps the finer of the two scales. */
function addBig(a: bigint, as: number, b: bigint, bs: number, format: QuantityFormat): QuantityValue {
  const scale = Math.min(as, bs);
  return new QuantityValue(alignTo(a, as, scale) + alignTo(b, bs, scale), scale, format, true, true);
}

function parseQuantity(s: string): QuantityValue {
  return QuantityValue.parse(s);
}

function isQuantity(s: string): boolean {
  try {
    QuantityValue.parse(s);
    return true;
  } catch (err) {
    if (err instanceof CelError) return false;
    throw err;
  }
}

function asInteger(q: QuantityValue): bigint {
  const v = q.asInt64();
  if (v === undefined) throw new CelError("cannot convert value to integer");
  return v;
}

/** Kubernetes charges parsing one traversal of the string (0.1 per character) in place of the base cost. */
function parseCost(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return Math.max(0, Math.ceil(n * 0.1) - 1);
}

const Q = "kubernetes.Quantity";

export const quantityLibrary: Library = {
  name: "kubernetes.quantity",
  availability: "kubernetes",
  functions: [
    fn("quantity", globalFn("string_to_quantity", ["string"], Q, parseQuantity, parseCost)),
    fn("isQuantity", globalFn("is_quantity_string", ["string"], "bool", isQuantity, parseCost)),
    // A global function, `sign(q)`, as Kubernetes declares it (cel.Overload, not cel.MemberOverload).
    fn(
      "sign",
      globalFn("quantity_sign", [Q], "int", (q: QuantityValue) => BigInt(q.sign())),
    ),
    fn(
      "isGreaterThan",
      memberFn(
        "quantity_is_greater_than",
        [Q, Q],
        "bool",
        (a: QuantityValue, b: QuantityValue) => a.compareTo(b) === 1,
      ),
    ),
    fn(
      "isLessThan",
      memberFn(
        "quantity_is_less_than",
        [Q, Q],
        "bool",
        (a: QuantityValue, b: QuantityValue) => a.compareTo(b) === -1,
      ),
    ),
    fn(
      "compareTo",
      memberFn("quantity_compare_to", [Q, Q], "int", (a: QuantityValue, b: QuantityValue) =>
        BigInt(a.compareTo(b)),
      ),
    ),
    fn(
      "asApproximateFloat",
      memberFn("quantity_get_float", [Q], "double", (q: QuantityValue) => q.asApproximateFloat()),
    ),
    fn("asInteger", memberFn("quantity_get_int", [Q], "int", asInteger)),
    fn(
      "isInteger",
      memberFn("quantity_is_integer", [Q], "bool", (q: QuantityValue) => q.asInt64() !== undefined),
    ),
    fn(
      "add",
      memberFn("quantity_add", [Q, Q], Q, (a: QuantityValue, b: QuantityValue) => a.add(b)),
      memberFn("quantity_add_int", [Q, "int"], Q, (a: QuantityValue, b: bigint) =>
        a.add(QuantityValue.fromInt(b)),
      ),
    ),
    fn(
      "sub",
      memberFn("quantity_sub", [Q, Q], Q, (a: QuantityValue, b: QuantityValue) => a.sub(b)),
      memberFn("quantity_sub_int", [Q, "int"], Q, (a: QuantityValue, b: bigint) =>
        a.sub(QuantityValue.fromInt(b)),
      ),
    ),
  ],
};
