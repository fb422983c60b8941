/**
 * The cel-spec conformance data (as packaged by @bufbuild/cel-spec) read into our values: expected
 * values and bindings (cel.expr.Value in proto JSON), which tests need protobuf messages we do not
 * have, and the flat list of a suite's tests. Shared by the conformance and differential tests.
 */
import type {
  SerializedIncrementalTest,
  SerializedIncrementalTestSuite,
} from "@bufbuild/cel-spec/testdata/tests.js";
import {
  CelMap,
  CelType,
  type CelValue,
  Duration,
  type MapKey,
  Timestamp,
  UInt,
} from "../../src/cel/runtime/values.ts";
import { LEGACY_FORMAT_DEPARTURES } from "./cel-spec-format.ts";

const NS = 1_000_000_000n;

export class Unsupported extends Error {}

export type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };
export type JsonObject = { readonly [k: string]: Json };

export function obj(v: Json | undefined): JsonObject {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Unsupported("malformed value");
  return v as JsonObject;
}

function str(v: Json | undefined): string {
  if (typeof v !== "string") throw new Unsupported("malformed value");
  return v;
}

function toDouble(v: Json | undefined): number {
  if (typeof v === "number") return v;
  if (v === "NaN") return Number.NaN;
  if (v === "Infinity") return Number.POSITIVE_INFINITY;
  if (v === "-Infinity") return Number.NEGATIVE_INFINITY;
  if (v === undefined) return 0;
  throw new Unsupported("malformed double");
}

function protoDuration(text: string): Duration {
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(text);
  if (!m) throw new Unsupported(`duration ${text}`);
  const nanos = BigInt(m[2] ?? "0") * NS + BigInt((m[3] ?? "").padEnd(9, "0"));
  return new Duration(m[1] ? -nanos : nanos);
}

function protoTimestamp(text: string): Timestamp {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!m) throw new Unsupported(`timestamp ${text}`);
  const ms = Date.parse(`${m[1]}Z`);
  return new Timestamp(BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0")));
}

/** A cel.expr.Value in proto JSON → our value; protobuf messages are unsupported. */
export function fromSpecValue(json: Json | undefined): CelValue {
  const v = obj(json);
  const [kind] = Object.keys(v);
  const x = kind === undefined ? undefined : v[kind];
  switch (kind) {
    case "nullValue":
      return null;
    case "boolValue":
      return x === true;
    case "int64Value":
      return BigInt(typeof x === "number" ? x : str(x));
    case "uint64Value":
      return new UInt(BigInt(typeof x === "number" ? x : str(x)));
    case "doubleValue":
      return toDouble(x);
    case "stringValue":
      return str(x);
    case "bytesValue":
      return new Uint8Array(Buffer.from(str(x), "base64"));
    case "listValue":
      return ((obj(x).values ?? []) as readonly Json[]).map(fromSpecValue);
    case "mapValue": {
      const m = new CelMap();
      for (const e of (obj(x).entries ?? []) as readonly Json[]) {
        const entry = obj(e);
        m.set(fromSpecValue(entry.key) as MapKey, fromSpecValue(entry.value));
      }
      return m;
    }
    case "typeValue":
      return new CelType(str(x));
    case "objectValue": {
      const any = obj(x);
      const type = str(any["@type"]);
      if (type === "type.googleapis.com/google.protobuf.Duration") return protoDuration(str(any.value));
      if (type === "type.googleapis.com/google.protobuf.Timestamp") return protoTimestamp(str(any.value));
      throw new Unsupported(`protobuf message ${type}`);
    }
    default:
      throw new Unsupported(`value kind ${String(kind)}`);
  }
}

const MESSAGE_LITERAL = /(?:^|[^\w.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*\s*\{/;

/** Why a conformance test cannot run on an engine without protobuf messages, or undefined. */
export function specSkipReason(t: SerializedIncrementalTest): string | undefined {
  const o = t.original as unknown as JsonObject;
  if (o.checkOnly === true) return "check-only";
  if (typeof o.container === "string" && o.container !== "") return `container ${o.container}`;
  for (const d of (o.typeEnv ?? []) as readonly Json[]) {
    const decl = obj(d);
    if (decl.function !== undefined) return "declares functions";
    if (/messageType|abstractType|wellKnown|enum/.test(JSON.stringify(decl)))
      return "declares protobuf types";
  }
  if (MESSAGE_LITERAL.test(t.original.expr)) return "protobuf message literal";
  if (/\bcel\.expr\.conformance\b|google\.protobuf\.(?!Timestamp\b|Duration\b)/.test(t.original.expr))
    return "protobuf types";
  return undefined;
}

/** A conformance test's bindings as our values; Unsupported when one is an error or a message. */
export function specBindings(t: SerializedIncrementalTest): Record<string, CelValue> {
  const out: Record<string, CelValue> = {};
  const o = t.original as unknown as JsonObject;
  if (o.bindings === undefined) return out;
  for (const [name, b] of Object.entries(obj(o.bindings))) {
    const exprValue = obj(b);
    if (exprValue.value === undefined) throw new Unsupported("binding is an error or unknown");
    out[name] = fromSpecValue(exprValue.value);
  }
  return out;
}

/** Every test of a suite with its "suite/section/name" path. */
export function collectSpecTests(
  suite: SerializedIncrementalTestSuite,
  path: string,
  out: { path: string; t: SerializedIncrementalTest }[] = [],
): { path: string; t: SerializedIncrementalTest }[] {
  for (const t of suite.tests ?? []) out.push({ path: `${path}/${t.original.name ?? t.original.expr}`, t });
  for (const s of suite.suites ?? []) collectSpecTests(s, `${path}/${s.name}`, out);
  return out;
}

/**
 * Where Kubernetes' CEL departs from the cel-spec suite on purpose. The suite follows the newest
 * cel-go; the API server runs cel-go v0.26 configured by environment/base.go (strings extension
 * pinned to version 2, with the legacy formatter; optional library as `cel.OptionalTypes()` gives
 * it), and celgate follows the API server. Each entry gives the Kubernetes result (a value, or an
 * error whose message contains the text) with the upstream source that decides it; the conformance
 * tests assert that result instead of the suite's, and the differential test leaves the case out.
 */
export interface Departure {
  readonly reason: string;
  readonly kubernetes: { readonly value: CelValue } | { readonly error: string };
}

const BAD_PRESENCE_TEST =
  "cel-go interpreter/attributes.go refQualify: a presence test on a value that is neither a map nor a list is false, unless EnableErrorOnBadPresenceTest, which cel-go's conformance run sets (conformance/conformance_test.go) and Kubernetes' environment/base.go never does";

const STRINGS_V2_OFFSET =
  "cel-go ext/strings.go indexOfOffset/lastIndexOfOffset since v0.22 (Kubernetes 1.32+): an offset past the end finds nothing (-1); the suite expects the older error";

export const KUBERNETES_DEPARTURES: ReadonlyMap<string, Departure> = new Map<string, Departure>([
  ...LEGACY_FORMAT_DEPARTURES,
  [
    "string_ext/value_errors/indexof_out_of_range",
    { reason: STRINGS_V2_OFFSET, kubernetes: { value: true } },
  ],
  [
    "string_ext/value_errors/lastindexof_out_of_range",
    { reason: STRINGS_V2_OFFSET, kubernetes: { value: true } },
  ],
  [
    "optionals/optionals/map_null_entry_no_such_key",
    { reason: BAD_PRESENCE_TEST, kubernetes: { value: false } },
  ],
  [
    "optionals/optionals/map_present_key_invalid_field",
    { reason: BAD_PRESENCE_TEST, kubernetes: { value: false } },
  ],
]);
