/**
 * Kubernetes' semver library (`semver`, `isSemver`, comparisons and accessors), parsing as
 * github.com/blang/semver/v4 does, with its error texts. Build metadata is kept for printing but, as
 * semver requires, plays no part in ordering or equality.
 */
import { CelError, CelObject, type CelValue } from "../runtime/values.ts";
import { quote } from "../go/quote.ts";
import { numError, parseUint64 } from "../go/strconv.ts";
import { fn, globalFn, type Library, memberFn } from "./types.ts";

const NUMBERS = /^[0-9]*$/;
const ALPHANUM = /^[A-Za-z0-9-]*$/;

type PreRelease = { readonly num: bigint } | { readonly str: string };

function comparePre(a: PreRelease, b: PreRelease): number {
  if ("num" in a) {
    if (!("num" in b)) return -1;
    return a.num === b.num ? 0 : a.num > b.num ? 1 : -1;
  }
  if ("num" in b) return 1;
  return a.str === b.str ? 0 : a.str > b.str ? 1 : -1;
}

/** Go's strconv.ParseUint(s, 10, 64) on a string of digits, with its errors. */
function parseUint(s: string): bigint {
  const v = parseUint64(s);
  if (typeof v === "string") throw new CelError(numError("ParseUint", s, v));
  return v;
}

function hasLeadingZeroes(s: string): boolean {
  return s.length > 1 && s[0] === "0";
}

function parseNumber(s: string, what: string): bigint {
  if (!NUMBERS.test(s)) throw new CelError(`Invalid character(s) found in ${what} number ${quote(s)}`);
  if (hasLeadingZeroes(s)) {
    throw new CelError(
      `${what[0]?.toUpperCase()}${what.slice(1)} number must not contain leading zeroes ${quote(s)}`,
    );
  }
  return parseUint(s);
}

/** `kubernetes.Semver`: a semantic version. */
export class SemverValue extends CelObject {
  readonly celType = "kubernetes.Semver";
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: readonly PreRelease[],
    readonly build: readonly string[],
  ) {
    super();
  }

  /** blang/semver's strict `Parse`; throws a CelError with its message. */
  static parse(s: string): SemverValue {
    if (s.length === 0) throw new CelError("Version string empty");
    const parts = splitN(s, ".", 3);
    if (parts.length !== 3) throw new CelError("No Major.Minor.Patch elements found");
    const major = parseNumber(parts[0] as string, "major");
    const minor = parseNumber(parts[1] as string, "minor");
    let patchStr = parts[2] as string;
    let build: string[] = [];
    let prerelease: string[] = [];
    const plus = patchStr.indexOf("+");
    if (plus !== -1) {
      build = patchStr.slice(plus + 1).split(".");
      patchStr = patchStr.slice(0, plus);
    }
    const dash = patchStr.indexOf("-");
    if (dash !== -1) {
      prerelease = patchStr.slice(dash + 1).split(".");
      patchStr = patchStr.slice(0, dash);
    }
    const patch = parseNumber(patchStr, "patch");
    const pre: PreRelease[] = [];
    for (const p of prerelease) {
      if (p.length === 0) throw new CelError("Prerelease is empty");
      if (NUMBERS.test(p)) {
        if (hasLeadingZeroes(p))
          throw new CelError(`Numeric PreRelease version must not contain leading zeroes ${quote(p)}`);
        pre.push({ num: parseUint(p) });
      } else if (ALPHANUM.test(p)) {
        pre.push({ str: p });
      } else {
        throw new CelError(`Invalid character(s) found in prerelease ${quote(p)}`);
      }
    }
    for (const b of build) {
      if (b.length === 0) throw new CelError("Build meta data is empty");
      if (!ALPHANUM.test(b)) throw new CelError(`Invalid character(s) found in build meta data ${quote(b)}`);
    }
    return new SemverValue(major, minor, patch, pre, build);
  }

  /**
   * Kubernetes' tolerant parse: drops one leading "v", strips leading zeros from the dot-separated
   * parts, and fills in a missing minor and patch. Unlike blang's ParseTolerant it does not trim
   * spaces.
   */
  static parseNormalized(input: string): SemverValue {
    const s = input.startsWith("v") ? input.slice(1) : input;
    const parts = splitN(s, ".", 3).map((p) => {
      if (p.length <= 1) return p;
      const trimmed = p.replace(/^0+/, "");
      return trimmed.length === 0 || !/^[0-9]/.test(trimmed) ? `0${trimmed}` : trimmed;
    });
    if (parts.length < 3) {
      if (/[+-]/.test(parts[parts.length - 1] as string)) {
        throw new CelError("short version cannot contain PreRelease/Build meta data");
      }
      while (parts.length < 3) parts.push("0");
    }
    return SemverValue.parse(parts.join("."));
  }

  compareTo(other: SemverValue): number {
    for (const [a, b] of [
      [this.major, other.major],
      [this.minor, other.minor],
      [this.patch, other.patch],
    ] as const) {
      if (a !== b) return a > b ? 1 : -1;
    }
    if (this.pre.length === 0 || other.pre.length === 0) {
      return this.pre.length === other.pre.length ? 0 : this.pre.length === 0 ? 1 : -1;
    }
    const n = Math.min(this.pre.length, other.pre.length);
    for (let i = 0; i < n; i++) {
      const c = comparePre(this.pre[i] as PreRelease, other.pre[i] as PreRelease);
      if (c !== 0) return c;
    }
    return this.pre.length === other.pre.length ? 0 : this.pre.length < other.pre.length ? -1 : 1;
  }

  equals(other: CelValue): boolean {
    return other instanceof SemverValue && this.compareTo(other) === 0;
  }

  override toString(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    if (this.pre.length > 0)
      s += `-${this.pre.map((p) => ("num" in p ? p.num.toString() : p.str)).join(".")}`;
    if (this.build.length > 0) s += `+${this.build.join(".")}`;
    return s;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** Go's strings.SplitN. */
function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}

/** Kubernetes hands a uint64 component to CEL as an int64, which wraps above 2^63-1. */
function asInt(v: bigint): bigint {
  return BigInt.asIntN(64, v);
}

function parseWith(s: string, normalize: boolean): SemverValue {
  return normalize ? SemverValue.parseNormalized(s) : SemverValue.parse(s);
}

function isSemver(s: string, normalize: boolean): boolean {
  try {
    parseWith(s, normalize);
    return true;
  } catch (err) {
    if (err instanceof CelError) return false;
    throw err;
  }
}

export const semverLibrary: Library = {
  name: "kubernetes.Semver",
  availability: "kubernetes",
  functions: [
    fn(
      "semver",
      globalFn("string_to_semver", ["string"], "kubernetes.Semver", (s: string) => SemverValue.parse(s)),
      globalFn(
        "string_bool_to_semver",
        ["string", "bool"],
        "kubernetes.Semver",
        (s: string, normalize: boolean) => parseWith(s, normalize),
      ),
    ),
    fn(
      "isSemver",
      globalFn("is_semver_string", ["string"], "bool", (s: string) => isSemver(s, false)),
      globalFn("is_semver_string_bool", ["string", "bool"], "bool", (s: string, normalize: boolean) =>
        isSemver(s, normalize),
      ),
    ),
    fn(
      "isGreaterThan",
      memberFn(
        "semver_is_greater_than",
        ["kubernetes.Semver", "kubernetes.Semver"],
        "bool",
        (a: SemverValue, b: SemverValue) => a.compareTo(b) === 1,
      ),
    ),
    fn(
      "isLessThan",
      memberFn(
        "semver_is_less_than",
        ["kubernetes.Semver", "kubernetes.Semver"],
        "bool",
        (a: SemverValue, b: SemverValue) => a.compareTo(b) === -1,
      ),
    ),
    fn(
      "compareTo",
      memberFn(
        "semver_compare_to",
        ["kubernetes.Semver", "kubernetes.Semver"],
        "int",
        (a: SemverValue, b: SemverValue) => BigInt(a.compareTo(b)),
      ),
    ),
    fn(
      "major",
      memberFn("semver_major", ["kubernetes.Semver"], "int", (v: SemverValue) => asInt(v.major)),
    ),
    fn(
      "minor",
      memberFn("semver_minor", ["kubernetes.Semver"], "int", (v: SemverValue) => asInt(v.minor)),
    ),
    fn(
      "patch",
      memberFn("semver_patch", ["kubernetes.Semver"], "int", (v: SemverValue) => asInt(v.patch)),
    ),
  ],
};
