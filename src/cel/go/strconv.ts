/**
 * Go's strconv for the numbers CEL prints and reads: FormatFloat in its 'e', 'f' and 'g' shapes
 * (strconv/ftoa.go), and ParseInt, ParseUint, ParseFloat and ParseBool in base 10 with 64 bits
 * (strconv/atoi.go, atof.go, atob.go), with the texts of Go's *NumError.
 *
 * Digits come from two sources, as in Go: the shortest digits that read back as the same double
 * (JavaScript's own shortest round-trip digits, which are Go's Ryu digits), or the exact binary
 * value rounded half to even at the requested digit (Go's decimal.Round). fmtE and fmtF then lay
 * the digits out as Go does.
 */
import { quote } from "./quote.ts";

/**
 * Go's decimalSlice: the digits `d` without leading zeros (empty for zero) and the place of the
 * decimal point, so the value is 0.d × 10^dp.
 */
interface Decimal {
  readonly d: string;
  readonly dp: number;
}

const ZERO: Decimal = { d: "", dp: 0 };

/** The shortest digits of a finite, non-negative double that parse back to it. */
function shortestDecimal(abs: number): Decimal {
  if (abs === 0) return ZERO;
  // toExponential() without an argument gives the shortest round-trip digits, as Go's Ryu does.
  const [mant = "0", exp = "0"] = abs.toExponential().split("e");
  return { d: mant.replace(".", ""), dp: Number(exp) + 1 };
}

/** The exact value of a finite, non-negative double as digits / 10^scale. */
function exactValue(abs: number): { digits: bigint; scale: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, abs);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (biased === 0) {
    exp = -1074;
  } else {
    mantissa |= 1n << 52n;
    exp = biased - 1075;
  }
  if (exp >= 0) return { digits: mantissa << BigInt(exp), scale: 0 };
  return { digits: mantissa * 5n ** BigInt(-exp), scale: -exp };
}

/** n / divisor rounded to the nearest integer, ties to even (the exact value decides, as in Go). */
function divRoundHalfEven(n: bigint, divisor: bigint): bigint {
  const q = n / divisor;
  const twice = (n % divisor) * 2n;
  if (twice > divisor || (twice === divisor && q % 2n === 1n)) return q + 1n;
  return q;
}

/** The integer `digits` with the decimal point `fraction` digits from its end, trailing zeros dropped. */
function toDecimal(digits: bigint, fraction: number): Decimal {
  if (digits === 0n) return ZERO;
  const text = digits.toString();
  return { d: text.replace(/0+$/, ""), dp: text.length - fraction };
}

/** The exact value rounded to `n` significant digits (decimal.Round(n) for 'e' and 'g'). */
function roundedToDigits(abs: number, n: number): Decimal {
  const { digits, scale } = exactValue(abs);
  const length = digits.toString().length;
  if (digits === 0n || length <= n) return toDecimal(digits, scale);
  const rounded = divRoundHalfEven(digits, 10n ** BigInt(length - n));
  // A carry (9.99 → 10.0) adds a digit; the point moves with it.
  return toDecimal(rounded, scale - (length - n));
}

/** The exact value rounded to `prec` digits after the point (decimal.Round(dp+prec) for 'f'). */
function roundedToFraction(abs: number, prec: number): Decimal {
  const { digits, scale } = exactValue(abs);
  if (prec >= scale) return toDecimal(digits * 10n ** BigInt(prec - scale), prec);
  return toDecimal(divRoundHalfEven(digits, 10n ** BigInt(scale - prec)), prec);
}

/** %e: -d.ddddde±dd, with at least two exponent digits. */
function fmtE(neg: boolean, digs: Decimal, prec: number): string {
  let out = neg ? "-" : "";
  out += digs.d === "" ? "0" : (digs.d[0] as string);
  if (prec > 0) out += `.${digs.d.slice(1, prec + 1).padEnd(prec, "0")}`;
  // Zero has exponent 0.
  const exp = digs.d === "" ? 0 : digs.dp - 1;
  const e = Math.abs(exp);
  return `${out}e${exp < 0 ? "-" : "+"}${e < 10 ? "0" : ""}${e}`;
}

/** %f: -ddddddd.ddddd, the integer part padded with zeros where the digits end before the point. */
function fmtF(neg: boolean, digs: Decimal, prec: number): string {
  let out = neg ? "-" : "";
  out += digs.dp > 0 ? digs.d.slice(0, digs.dp).padEnd(digs.dp, "0") : "0";
  if (prec > 0) {
    let fraction = "";
    for (let i = 0; i < prec; i++) {
      const j = digs.dp + i;
      fraction += j >= 0 && j < digs.d.length ? digs.d[j] : "0";
    }
    out += `.${fraction}`;
  }
  return out;
}

/** %g: %e for exponents below -4 or from the precision on (6 for the shortest digits), else %f. */
function fmtG(neg: boolean, digs: Decimal, prec: number, shortest: boolean): string {
  const nd = digs.d.length;
  let eprec = prec;
  if (eprec > nd && nd >= digs.dp) eprec = nd;
  if (shortest) eprec = 6;
  const exp = digs.dp - 1;
  if (exp < -4 || exp >= eprec) return fmtE(neg, digs, Math.min(prec, nd) - 1);
  return fmtF(neg, digs, Math.max((prec > digs.dp ? nd : prec) - digs.dp, 0));
}

/**
 * Go's strconv.FormatFloat(x, fmt, prec, 64). A negative `prec` asks for the fewest digits that
 * read back as `x`; otherwise it counts digits after the point ('e', 'f') or significant digits
 * ('g'). Not-a-number and the infinities are "NaN", "+Inf" and "-Inf".
 */
export function formatFloat(x: number, fmt: "e" | "f" | "g", prec: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Number.POSITIVE_INFINITY) return "+Inf";
  if (x === Number.NEGATIVE_INFINITY) return "-Inf";
  const neg = x < 0 || Object.is(x, -0);
  const abs = Math.abs(x);
  const shortest = prec < 0;
  let digs: Decimal;
  let p = prec;
  if (shortest) {
    digs = shortestDecimal(abs);
    const nd = digs.d.length;
    p = fmt === "e" ? Math.max(nd - 1, 0) : fmt === "f" ? Math.max(nd - digs.dp, 0) : nd;
  } else if (fmt === "f") {
    digs = roundedToFraction(abs, p);
  } else {
    if (fmt === "g" && p === 0) p = 1;
    digs = roundedToDigits(abs, fmt === "e" ? p + 1 : p);
  }
  if (fmt === "e") return fmtE(neg, digs, p);
  if (fmt === "f") return fmtF(neg, digs, p);
  return fmtG(neg, digs, p, shortest);
}

// ---------------------------------------------------------------------------------------------
// Parsing: each function returns the value, or the reason Go's *NumError gives.

/** The `Err` of Go's *NumError. */
export type NumErrorReason = "invalid syntax" | "value out of range";

/** The text of Go's *NumError: `strconv.ParseUint: parsing "x": invalid syntax`. */
export function numError(func: string, input: string, reason: NumErrorReason): string {
  return `strconv.${func}: parsing ${quote(input)}: ${reason}`;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const INT_TEXT = /^[+-]?\d+$/;
const UINT_TEXT = /^\d+$/;
const DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const HEX_FLOAT = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/;
const SPECIAL_FLOAT = /^(?:([+-]?)(inf|infinity)|nan)$/i;

/** Go's strconv.ParseInt(s, 10, 64). */
export function parseInt64(s: string): bigint | NumErrorReason {
  if (!INT_TEXT.test(s)) return "invalid syntax";
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? "value out of range" : v;
}

/** Go's strconv.ParseUint(s, 10, 64): digits only, no sign. */
export function parseUint64(s: string): bigint | NumErrorReason {
  if (!UINT_TEXT.test(s)) return "invalid syntax";
  const v = BigInt(s);
  return v > UINT64_MAX ? "value out of range" : v;
}

/**
 * Go's strconv.ParseFloat(s, 64): decimal or hexadecimal (0x1p-2) forms, inf, infinity and nan in
 * any case. A value beyond the double range is out of range (Go returns ±Inf with that error).
 */
export function parseFloat64(s: string): number | NumErrorReason {
  const special = SPECIAL_FLOAT.exec(s);
  if (special) {
    if (special[2] === undefined) return Number.NaN;
    return special[1] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  let v: number;
  if (DECIMAL_FLOAT.test(s)) {
    v = Number(s);
  } else {
    const hex = HEX_FLOAT.exec(s);
    const whole = hex?.[2] ?? "";
    const frac = hex?.[3] ?? "";
    if (!hex || whole + frac === "") return "invalid syntax";
    v = Number.parseInt(whole + frac, 16) * 2 ** (Number(hex[4]) - 4 * frac.length);
    if (hex[1] === "-") v = -v;
  }
  return Number.isFinite(v) ? v : "value out of range";
}

/** Go's strconv.ParseBool spellings. */
const BOOL_TEXT: ReadonlyMap<string, boolean> = new Map([
  ["1", true],
  ["t", true],
  ["T", true],
  ["true", true],
  ["TRUE", true],
  ["True", true],
  ["0", false],
  ["f", false],
  ["F", false],
  ["false", false],
  ["FALSE", false],
  ["False", false],
]);

/** Go's strconv.ParseBool. */
export function parseBool(s: string): boolean | "invalid syntax" {
  return BOOL_TEXT.get(s) ?? "invalid syntax";
}
