/**
 * A case's `expect`: what the decision must be (allowed, code, reason, message, warnings, audit
 * annotations, which policies matched, the patch), each remembered with the path it was written at.
 */
import type { JsonPatchOp } from "../engine/types.ts";
import type { Field, YamlReader } from "../yaml/reader.ts";
import { decode, describe, regex, regexes, report, scalar, strings, text } from "./read.ts";
import { type At, EXPECT_KEYS, type Expectations, type ExpectKey } from "./types.ts";

const PATCH_OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;

/** Keys of `expect` that state one thing between them: a case giving one replaces a default's others. */
const EXPECT_SLOTS: readonly (readonly ExpectKey[])[] = [
  ["message", "messageMatches"],
  ["warnings", "warningsMatch"],
  ["patched", "patch", "unchanged"],
];

export type ExpectFields = { -readonly [K in ExpectKey]?: At<NonNullable<Expectations[K]>> };

/** One JSON Patch operation; undefined (reported) when it is malformed. */
function patchOp(r: YamlReader, item: Field): JsonPatchOp | undefined {
  const op = r.mapping(item);
  if (!op) return undefined;
  op.known(["op", "path", "value", "from"], "a JSON Patch operation");
  const kindField = op.get("op");
  const kind = scalar(kindField);
  if (typeof kind !== "string" || !(PATCH_OPS as readonly string[]).includes(kind)) {
    report(r, kindField ?? item, `expected op to be one of ${PATCH_OPS.join(", ")}`);
    return undefined;
  }
  const pathField = op.get("path");
  const path = scalar(pathField);
  if (typeof path !== "string") {
    report(r, pathField ?? item, "expected path to be a JSON Pointer string");
    return undefined;
  }
  const from = scalar(op.get("from"));
  const value = op.get("value");
  return {
    op: kind as JsonPatchOp["op"],
    path,
    ...(typeof from === "string" ? { from } : {}),
    ...(value !== undefined ? { value: decode(r, value) } : {}),
  };
}

function patchOps(r: YamlReader, f: Field): JsonPatchOp[] | undefined {
  const list = r.list(f);
  if (!list) return undefined;
  const out: JsonPatchOp[] = [];
  let bad = false;
  for (const item of list) {
    const op = patchOp(r, item);
    if (op) out.push(op);
    else bad = true;
  }
  return bad ? undefined : out;
}

function auditAnnotations(r: YamlReader, f: Field): Record<string, string> | undefined {
  const m = r.mapping(f);
  if (!m) return undefined;
  const annotations: Record<string, string> = {};
  let bad = false;
  for (const k of m.keys()) {
    const s = r.string(m.get(k) as Field);
    if (s === undefined) bad = true;
    else annotations[k] = s;
  }
  return bad ? undefined : annotations;
}

/** The value of one `expect` key, read as its kind; undefined (reported) when it is wrong. */
function expectation(r: YamlReader, key: ExpectKey, f: Field): unknown {
  switch (key) {
    case "allowed":
    case "unchanged":
      return r.boolean(f);
    case "code": {
      const value = scalar(f);
      if (typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599) return value;
      report(r, f, `expected an HTTP status code (an integer from 100 to 599), got ${describe(f.node)}`);
      return undefined;
    }
    case "reason":
    case "message":
      return text(r, f);
    case "messageMatches": {
      const s = text(r, f);
      return s !== undefined && regex(r, s, f) ? s : undefined;
    }
    case "warnings":
    case "matched":
    case "skipped":
      return strings(r, f);
    case "warningsMatch":
      return regexes(r, f);
    case "auditAnnotations":
      return auditAnnotations(r, f);
    case "patched":
      return r.mapping(f) ? decode(r, f) : undefined;
    case "patch":
      return patchOps(r, f);
  }
}

/** The keys written in one `expect` mapping, each with its path. */
export function expectations(r: YamlReader, f: Field): ExpectFields | undefined {
  const obj = r.mapping(f);
  if (!obj) return undefined;
  obj.known(EXPECT_KEYS, "expect");
  const out: Record<string, At<unknown>> = {};
  for (const key of EXPECT_KEYS) {
    const value = obj.get(key);
    if (value === undefined) continue;
    const v = expectation(r, key, value);
    if (v !== undefined) out[key] = { value: v, path: value.path };
  }
  return out as ExpectFields;
}

/** `upper`'s keys replace `lower`'s, a key replacing the others of its slot too. */
export function mergeExpect(lower: ExpectFields | undefined, upper: ExpectFields | undefined): ExpectFields {
  const out: ExpectFields = { ...lower };
  if (!upper) return out;
  for (const slot of EXPECT_SLOTS)
    if (slot.some((k) => upper[k] !== undefined)) for (const k of slot) delete out[k];
  return { ...out, ...upper };
}
