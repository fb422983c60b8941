/**
 * Where the cel-spec suite's `string_ext/format` tests (the strings extension at version 4, cel-go's
 * second formatter) differ from Kubernetes, which pins the strings extension to version 2 and so
 * runs the legacy formatter (cel-go v0.26 ext/formatting.go `stringFormatter`, locale en_US; its
 * cases in ext/formatting_test.go give the same shapes: `["NaN", "+Inf", "-Inf"]`,
 * `{1:"value1", 2:"value2", true:"NaN"}`, `2.718280×10⁰⁰` (without cel-go's test's U+202F: see
 * src/cel/go/message.ts), `∞`).
 */
import type { CelValue } from "../../src/cel/runtime/values.ts";

export interface FormatDeparture {
  readonly reason: string;
  readonly kubernetes: { readonly value: CelValue } | { readonly error: string };
}

const X10 = "\u00d710";
const SCIENTIFIC =
  "legacy formatter: %e prints through x/text/message (ext/formatting.go Scientific), CLDR's superscripting exponent";
const INFINITY =
  "legacy formatter: %f and %e print the infinities through x/text/message as ∞ (ext/formatting.go Fixed, Scientific)";
const DECIMAL =
  "legacy formatter: %d takes integers only (ext/formatting.go formatDecimal: decimal clause can only be used on integers)";
const AGGREGATE =
  "legacy formatter: %s writes list elements and map entries as CEL literals, doubles as %.6f, maps as key:value sorted by quoted key (ext/formatting.go formatList, formatMap, quoteForCEL)";

const value = (v: CelValue) => ({ value: v });
const decimalError = { error: "decimal clause can only be used on integers, was given double" };

const ENTRIES: readonly [name: string, reason: string, kubernetes: FormatDeparture["kubernetes"]][] = [
  ["scientific notation formatting clause", SCIENTIFIC, value(`1.052033${X10}\u2070\u00b3`)],
  ["default precision for scientific notation", SCIENTIFIC, value(`2.718280${X10}\u2070\u2070`)],
  ["dyntype support for scientific notation", SCIENTIFIC, value(`2.718280${X10}\u2070\u2070`)],
  [
    "scientific notation formatting clause in a string variable",
    SCIENTIFIC,
    value(`1.052033${X10}\u2070\u00b3`),
  ],
  ["positive infinity support for scientific notation", INFINITY, value("\u221e")],
  ["negative infinity support for scientific notation", INFINITY, value("-\u221e")],
  ["positive infinity support for fixed-point", INFINITY, value("\u221e")],
  ["negative infinity support for fixed-point", INFINITY, value("-\u221e")],
  ["NaN support for decimal", DECIMAL, decimalError],
  ["positive infinity support for decimal", DECIMAL, decimalError],
  ["negative infinity support for decimal", DECIMAL, decimalError],
  [
    "list support for string",
    AGGREGATE,
    value('["abc", 3.140000, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]'),
  ],
  [
    "map support for string",
    AGGREGATE,
    value('{"key1":b"xyz", "key2":duration("7200s"), "key3":2.718280, "key4":true, "key5":null}'),
  ],
  ["map support (all key types)", AGGREGATE, value('{1:"value1", 2:"value2", true:"NaN"}')],
  ["dyntype NaN/infinity support", AGGREGATE, value('["NaN", "+Inf", "-Inf"]')],
  ["dyntype support for lists", AGGREGATE, value('[6, 4.200000, "a string"]')],
  ["dyntype support for maps", AGGREGATE, value('{"strKey":"x", 6:duration("422s"), true:42}')],
];

/** The departures by "string_ext/format/<name>". */
export const LEGACY_FORMAT_DEPARTURES: ReadonlyMap<string, FormatDeparture> = new Map(
  ENTRIES.map(([name, reason, kubernetes]) => [`string_ext/format/${name}`, { reason, kubernetes }]),
);
