/**
 * golang.org/x/text/message's Printer for English (language.English, which cel-go's legacy
 * `string.format` matches "en_US" to), as far as `%.Nf` and `%.Ne` of a float64 go
 * (message/print.go fmtDecimalFloat and fmtScientific, internal/number/decimal.go ConvertFloat,
 * internal/number/format.go appendDecimal and appendScientific):
 *
 * - the digits are strconv's, correctly rounded to N places ('f') or N+1 significant digits ('e');
 * - the integer part of `%f` is grouped by threes with ",", the decimal separator is ".";
 * - `%e` writes the exponent as CLDR's superscripting form, `1.052033×10⁰³`: U+00D7 with no space
 *   around it as the x/text Kubernetes builds with prints it (v0.33.0 in 1.36; cel-go's own test,
 *   at x/text v0.22, expects U+202F around it, which a real API server does not print), at least
 *   two superscript digits, U+207B before a negative exponent and no sign otherwise;
 * - infinities are "∞" and "-∞", not-a-number is "NaN", and negative zero prints as zero (x/text
 *   takes the sign from `x < 0`).
 */
import { formatFloat } from "./strconv.ts";

const INFINITY = "\u221e";
const NAN = "NaN";
const TIMES_TEN = "\u00d710";
const SUPERSCRIPT_MINUS = "\u207b";
/** Not sequential in Unicode: one, two and three are Latin-1's. */
const SUPERSCRIPT_DIGITS = [
  "\u2070",
  "\u00b9",
  "\u00b2",
  "\u00b3",
  "\u2074",
  "\u2075",
  "\u2076",
  "\u2077",
  "\u2078",
  "\u2079",
];

function special(x: number): string | undefined {
  if (Number.isNaN(x)) return NAN;
  if (x === Number.POSITIVE_INFINITY) return INFINITY;
  if (x === Number.NEGATIVE_INFINITY) return `-${INFINITY}`;
  return undefined;
}

/** Digits grouped by threes from the right, as English's "#,##0.###" pattern groups them. */
function group(digits: string): string {
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ",";
    out += digits[i];
  }
  return out;
}

/** `message.NewPrinter(language.English).Sprintf("%.<prec>f", x)`. */
export function printFixed(x: number, prec: number): string {
  const s = special(x);
  if (s !== undefined) return s;
  const text = formatFloat(Math.abs(x), "f", prec);
  const dot = text.indexOf(".");
  const whole = dot < 0 ? text : text.slice(0, dot);
  const fraction = dot < 0 ? "" : text.slice(dot);
  return `${x < 0 ? "-" : ""}${group(whole)}${fraction}`;
}

/** `message.NewPrinter(language.English).Sprintf("%.<prec>e", x)`. */
export function printScientific(x: number, prec: number): string {
  const s = special(x);
  if (s !== undefined) return s;
  // strconv writes d.ddde±XX; x/text takes the same digits and writes its own exponent.
  const text = formatFloat(Math.abs(x), "e", prec);
  const e = text.indexOf("e");
  const mantissa = text.slice(0, e);
  const exponent = Number(text.slice(e + 1));
  const digits = String(Math.abs(exponent)).padStart(2, "0");
  let sup = exponent < 0 ? SUPERSCRIPT_MINUS : "";
  for (const d of digits) sup += SUPERSCRIPT_DIGITS[Number(d)];
  return `${x < 0 ? "-" : ""}${mantissa}${TIMES_TEN}${sup}`;
}
