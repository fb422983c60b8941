/**
 * Reading a test suite's values through the shared YAML reader: the suite format's wording (every
 * problem a TE_SUITE error, unknown keys included, since an expectation that is never checked is a
 * test that cannot fail) and the value kinds suites are made of (strings, string lists, regular
 * expressions, file references).
 */
import { isAbsolute, join } from "node:path";
import { type Document, isMap, isScalar, isSeq, Pair, YAMLMap } from "yaml";
import { type ToJSContext, toJS } from "yaml/util";
import { compileRegex } from "../cel/index.ts";
import type { DiagnosticSeverity } from "../errors.ts";
import { closestName } from "../policy/fields.ts";
import type { Field, Wording, YamlNode, YamlReader } from "../yaml/reader.ts";
import type { At, FileRef } from "./types.ts";

/** How a value reads in a message: `string "x"`, `number 3`, `a list`; an absent one as null. */
export function describe(node: YamlNode | undefined): string {
  if (node === undefined) return "nothing (null)";
  if (isSeq(node)) return "a list";
  if (isMap(node)) return "a mapping";
  const v: unknown = node.value;
  if (v === null || v === undefined) return "nothing (null)";
  if (typeof v === "string") return `string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}

function hintFor(key: string, known: readonly string[]): string {
  if ((key === "groups" || key === "usergroup") && known.includes("userGroup"))
    return "; the user's group is userGroup (group is the API group of a resource check)";
  if (key === "name" && known.includes("requestName"))
    return "; a case's name is written before its fields; the request's name is requestName";
  const near = closestName(key, known);
  return near ? `; did you mean '${near}'?` : `; expected one of ${known.join(", ")}`;
}

/**
 * The name yaml's decoder gives a collection (or an alias to one) used as a mapping key: its flow
 * text, `[ k ]`. Decoding a one-pair map takes yaml's own path; yaml's warning about such keys was
 * given when the whole document was decoded, so it is not repeated.
 */
function decodedKeyName(raw: unknown, doc: Document.Parsed): string {
  const probe = new YAMLMap(doc.schema);
  probe.items.push(new Pair(raw, null));
  const ctx: ToJSContext = {
    anchors: new Map(),
    doc,
    keep: true,
    mapAsMap: false,
    mapKeyWarned: true,
    maxAliasCount: 1000,
  };
  return Object.keys(toJS(probe, "", ctx) as object)[0] ?? "";
}

/** The suite format's wording. Keys are named as the decoded object names them (`1:` is "1"). */
export const SUITE_WORDING: Wording = {
  typeCode: "TE_SUITE",
  wrongType: (expected, got) =>
    expected === "boolean"
      ? `expected true or false, got ${describe(got)}`
      : `expected a ${expected}, got ${describe(got)}`,
  missingItem: "expected a value",
  fieldName(key, raw, doc) {
    if (isScalar(key)) return key.value === null ? "" : String(key.value);
    return decodedKeyName(raw, doc);
  },
  refusedKey: "expected a field name",
  unknownFieldCode: "TE_SUITE",
  unknownFieldSeverity: "error",
  unknownField: (key, known, what) => `unknown field '${key}' in ${what}${hintFor(key, known)}`,
};

/** Where a suite problem is: a field path, and the offset of what stands there. */
export interface Place {
  readonly path: string;
  readonly offset: number;
}

export function report(
  r: YamlReader,
  at: Place,
  message: string,
  severity: DiagnosticSeverity = "error",
): void {
  r.report("TE_SUITE", at.path, at.offset, message, severity);
}

/** The value a node decodes to (a mapping as a plain object), as the rest of the suite uses it. */
export function decode(r: YamlReader, f: Field): unknown {
  return f.node.toJS(r.doc, { maxAliasCount: 1000 });
}

/** A scalar's value, for comparisons; undefined when the field is absent or not a scalar. */
export function scalar(f: Field | undefined): unknown {
  return f && isScalar(f.node) ? f.node.value : undefined;
}

export function text(r: YamlReader, f: Field, options: { nonEmpty?: boolean } = {}): string | undefined {
  const s = r.string(f);
  if (s !== undefined && options.nonEmpty && s.trim() === "") {
    report(r, f, "expected a non-empty string");
    return undefined;
  }
  return s;
}

/** A list of strings and where each is; undefined if any item is not one (each such item is reported). */
function stringItems(r: YamlReader, f: Field): { value: string; field: Field }[] | undefined {
  const list = r.list(f);
  if (!list) return undefined;
  const out: { value: string; field: Field }[] = [];
  let bad = false;
  for (const item of list) {
    const s = r.string(item);
    if (s === undefined) bad = true;
    else out.push({ value: s, field: item });
  }
  return bad ? undefined : out;
}

/** A list of strings; undefined if any item is not one (each such item is reported). */
export function strings(r: YamlReader, f: Field): string[] | undefined {
  return stringItems(r, f)?.map((i) => i.value);
}

/** Whether `pattern` compiles as CEL's matches() would compile it; reported at `at` if not. */
export function regex(r: YamlReader, pattern: string, at: Place): boolean {
  try {
    compileRegex(pattern);
    return true;
  } catch (e) {
    report(
      r,
      at,
      `not a valid regular expression (RE2 syntax, as CEL's matches()): ${e instanceof Error ? e.message : String(e)}`,
    );
    return false;
  }
}

/** A list of regular expressions; undefined if any item is not a string or does not compile. */
export function regexes(r: YamlReader, f: Field): string[] | undefined {
  const items = stringItems(r, f);
  if (!items) return undefined;
  let bad = false;
  for (const { value, field } of items) if (!regex(r, value, field)) bad = true;
  return bad ? undefined : items.map((i) => i.value);
}

/** A file named in the suite, resolved against the suite's directory `dir`. */
export function fileRef(r: YamlReader, f: Field, dir: string): FileRef | undefined {
  const s = text(r, f, { nonEmpty: true });
  return s === undefined ? undefined : { written: s, resolved: isAbsolute(s) ? s : join(dir, s) };
}

export function fileRefs(r: YamlReader, f: Field, dir: string): At<FileRef>[] | undefined {
  const list = r.list(f);
  if (!list) return undefined;
  const out: At<FileRef>[] = [];
  for (const item of list) {
    const ref = fileRef(r, item, dir);
    if (ref) out.push({ value: ref, path: item.path });
  }
  return out;
}
