/**
 * Reading a test suite file: YAML text → a Suite whose cases have their defaults merged in. Pure (no
 * filesystem): files the suite names are only resolved against its directory here and read later.
 *
 * The format is strict where a slip would silently test less: an unknown key (a misspelt `alowed`)
 * is an error, not a warning, since an expectation that is never checked is a test that cannot fail.
 * Every problem is a TE_SUITE diagnostic at file:line:col with the field path, like policy diagnostics.
 */
import { dirname, isAbsolute, join } from "node:path";
import { type Document, isMap, isScalar, LineCounter, parseAllDocuments } from "yaml";
import { AUTHORIZER_DECISIONS, type AuthorizerRule } from "../cel/library/authz-table.ts";
import { compileRegex } from "../cel/regex/index.ts";
import type { GroupVersionKind, GroupVersionResource, JsonPatchOp, UserInfo } from "../engine/types.ts";
import type { Diagnostic, DiagnosticSeverity, SourceLocation } from "../errors.ts";
import { closestName } from "../policy/fields.ts";
import { childPath, resolveAlias, TextPositions, YamlSourceMap } from "../policy/source-map.ts";
import type { Operation } from "../policy/types.ts";
import {
  type At,
  EXPECT_KEYS,
  type Expectations,
  type ExpectKey,
  type FileRef,
  type JsonObject,
  type ObjectSource,
  SUITE_API_VERSION,
  SUITE_KIND,
  type Suite,
  type SuiteCase,
} from "./types.ts";

const TOP_FIELDS = [
  "apiVersion",
  "kind",
  "metadata",
  "policies",
  "resources",
  "authorizer",
  "defaults",
  "cases",
];
const METADATA_FIELDS = ["name", "description"];
const CASE_FIELDS = [
  "object",
  "objectFile",
  "oldObject",
  "oldObjectFile",
  "operation",
  "subResource",
  "resource",
  "kind",
  "requestName",
  "namespace",
  "userInfo",
  "namespaceObject",
  "dryRun",
  "defaulting",
  "reviewFile",
  "expect",
];
const GROUP_FIELDS = ["group", "defaults", "cases"];
const RULE_FIELDS = [
  "user",
  "userGroup",
  "verb",
  "group",
  "resource",
  "subresource",
  "namespace",
  "name",
  "path",
  "decision",
  "reason",
] as const;
const RULE_RESOURCE_FIELDS = ["group", "resource", "subresource", "namespace", "name"] as const;
const OPERATIONS: readonly Operation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];
const PATCH_OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;

/** Keys of `expect` that state one thing between them: a case giving one replaces a default's others. */
const EXPECT_SLOTS: readonly (readonly ExpectKey[])[] = [
  ["message", "messageMatches"],
  ["warnings", "warningsMatch"],
  ["patched", "patch", "unchanged"],
];

type ExpectFields = { -readonly [K in ExpectKey]?: At<NonNullable<Expectations[K]>> };

/** The case fields written at one level (defaults, a group's defaults, a case), each with its path. */
interface Fields {
  object?: At<ObjectSource>;
  oldObject?: At<ObjectSource>;
  operation?: At<Operation>;
  subResource?: At<string>;
  resource?: At<GroupVersionResource>;
  kind?: At<GroupVersionKind>;
  requestName?: At<string>;
  namespace?: At<string>;
  userInfo?: At<UserInfo>;
  namespaceObject?: At<JsonObject>;
  dryRun?: At<boolean>;
  defaulting?: At<boolean>;
  review?: At<FileRef>;
  expect?: ExpectFields;
}

export interface ParsedSuite {
  /** Undefined when the file has errors: a suite runs whole or not at all. */
  readonly suite: Suite | undefined;
  /** The suite's name for reports, even when it has errors (metadata.name, else from the file name). */
  readonly name: string;
  readonly diagnostics: Diagnostic[];
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** How a value reads in a message: `a string`, `number 3`, `a list`. */
function describe(v: unknown): string {
  if (v === null || v === undefined) return "nothing (null)";
  if (Array.isArray(v)) return "a list";
  if (isObject(v)) return "a mapping";
  if (typeof v === "string") return `string ${JSON.stringify(v)}`;
  return `${typeof v} ${String(v)}`;
}

/** The default suite name: the file name without `.test.yaml`. */
export function suiteNameFromFile(file: string): string {
  const base = file.split(/[\\/]/).at(-1) ?? file;
  return base.replace(/\.test\.ya?ml$/, "").replace(/\.ya?ml$/, "");
}

class Reader {
  readonly diagnostics: Diagnostic[] = [];
  errors = 0;
  readonly dir: string;

  constructor(
    readonly file: string,
    readonly map: YamlSourceMap,
    private readonly doc: Document.Parsed,
    private readonly positions: TextPositions,
  ) {
    this.dir = dirname(file);
  }

  report(
    path: string,
    message: string,
    severity: DiagnosticSeverity = "error",
    location: SourceLocation = this.map.locate(path),
  ): void {
    if (severity === "error") this.errors++;
    this.diagnostics.push({
      code: "TE_SUITE",
      severity,
      message,
      ...(path === "" ? {} : { path }),
      location,
    });
  }

  /** Where a key of the mapping at `path` is written (unknown fields are reported at their key). */
  keyLocation(path: string, key: string): SourceLocation {
    const parent = resolveAlias(this.doc, this.map.find(path).node);
    if (isMap(parent))
      for (const pair of parent.items) {
        const k = resolveAlias(this.doc, pair.key);
        if (isScalar(k) && String(k.value) === key && k.range) return this.positions.at(k.range[0]);
      }
    return this.map.locate(childPath(path, key));
  }

  /** Reports keys outside `known`, suggesting the nearest known one. */
  known(obj: JsonObject, path: string, known: readonly string[], what: string): void {
    for (const key of Object.keys(obj)) {
      if (known.includes(key)) continue;
      const hint = hintFor(key, known);
      this.report(
        childPath(path, key),
        `unknown field '${key}' in ${what}${hint}`,
        "error",
        this.keyLocation(path, key),
      );
    }
  }

  string(v: unknown, path: string, options: { nonEmpty?: boolean } = {}): string | undefined {
    if (typeof v !== "string") {
      this.report(path, `expected a string, got ${describe(v)}`);
      return undefined;
    }
    if (options.nonEmpty && v.trim() === "") {
      this.report(path, "expected a non-empty string");
      return undefined;
    }
    return v;
  }

  bool(v: unknown, path: string): boolean | undefined {
    if (typeof v !== "boolean") {
      this.report(path, `expected true or false, got ${describe(v)}`);
      return undefined;
    }
    return v;
  }

  mapping(v: unknown, path: string): JsonObject | undefined {
    if (!isObject(v)) {
      this.report(path, `expected a mapping, got ${describe(v)}`);
      return undefined;
    }
    return v;
  }

  list(v: unknown, path: string): unknown[] | undefined {
    if (!Array.isArray(v)) {
      this.report(path, `expected a list, got ${describe(v)}`);
      return undefined;
    }
    return v;
  }

  strings(v: unknown, path: string): string[] | undefined {
    const list = this.list(v, path);
    if (!list) return undefined;
    const out: string[] = [];
    let bad = false;
    list.forEach((item, i) => {
      const s = this.string(item, childPath(path, i));
      if (s === undefined) bad = true;
      else out.push(s);
    });
    return bad ? undefined : out;
  }

  regexes(v: unknown, path: string): string[] | undefined {
    const list = this.strings(v, path);
    if (!list) return undefined;
    let bad = false;
    list.forEach((p, i) => {
      if (!this.regex(p, childPath(path, i))) bad = true;
    });
    return bad ? undefined : list;
  }

  regex(pattern: string, path: string): boolean {
    try {
      compileRegex(pattern);
      return true;
    } catch (e) {
      this.report(
        path,
        `not a valid regular expression (RE2 syntax, as CEL's matches()): ${e instanceof Error ? e.message : String(e)}`,
      );
      return false;
    }
  }

  fileRef(v: unknown, path: string): FileRef | undefined {
    const s = this.string(v, path, { nonEmpty: true });
    return s === undefined ? undefined : { written: s, resolved: isAbsolute(s) ? s : join(this.dir, s) };
  }

  fileRefs(v: unknown, path: string): At<FileRef>[] | undefined {
    const list = this.list(v, path);
    if (!list) return undefined;
    const out: At<FileRef>[] = [];
    list.forEach((item, i) => {
      const p = childPath(path, i);
      const ref = this.fileRef(item, p);
      if (ref) out.push({ value: ref, path: p });
    });
    return out;
  }
}

function hintFor(key: string, known: readonly string[]): string {
  if ((key === "groups" || key === "usergroup") && known.includes("userGroup"))
    return "; the user's group is userGroup (group is the API group of a resource check)";
  if (key === "name" && known.includes("requestName"))
    return "; a case's name is written before its fields; the request's name is requestName";
  const near = closestName(key, known);
  return near ? `; did you mean '${near}'?` : `; expected one of ${known.join(", ")}`;
}

function kubernetesObject(r: Reader, v: unknown, path: string): JsonObject | undefined {
  const obj = r.mapping(v, path);
  if (!obj) return undefined;
  let ok = true;
  for (const key of ["apiVersion", "kind"]) {
    const value = obj[key];
    if (typeof value !== "string" || value === "") {
      r.report(
        value === undefined ? path : childPath(path, key),
        `expected a Kubernetes object: ${key} must be a non-empty string${value === undefined ? " (missing)" : `, got ${describe(value)}`}`,
      );
      ok = false;
    }
  }
  if (obj.metadata !== undefined && !isObject(obj.metadata)) {
    r.report(childPath(path, "metadata"), `expected a mapping, got ${describe(obj.metadata)}`);
    ok = false;
  }
  return ok ? obj : undefined;
}

function gvr(r: Reader, v: unknown, path: string, last: "resource" | "kind"): JsonObject | undefined {
  const obj = r.mapping(v, path);
  if (!obj) return undefined;
  const fields = ["group", "version", last];
  r.known(obj, path, fields, last === "resource" ? "a resource" : "a kind");
  let ok = true;
  for (const f of fields) {
    if (obj[f] === undefined) {
      r.report(path, `missing field '${f}' (write group: "" for the core group)`);
      ok = false;
    } else if (r.string(obj[f], childPath(path, f), { nonEmpty: f !== "group" }) === undefined) ok = false;
  }
  return ok ? obj : undefined;
}

function userInfo(r: Reader, v: unknown, path: string): UserInfo | undefined {
  const obj = r.mapping(v, path);
  if (!obj) return undefined;
  r.known(obj, path, ["username", "groups", "uid", "extra"], "userInfo");
  if (obj.username === undefined) {
    r.report(path, "missing field 'username'");
    return undefined;
  }
  const username = r.string(obj.username, childPath(path, "username"));
  const groups = obj.groups === undefined ? [] : r.strings(obj.groups, childPath(path, "groups"));
  const uid = obj.uid === undefined ? undefined : r.string(obj.uid, childPath(path, "uid"));
  let extra: Record<string, string[]> | undefined;
  if (obj.extra !== undefined) {
    const m = r.mapping(obj.extra, childPath(path, "extra"));
    if (m) {
      extra = {};
      for (const [k, val] of Object.entries(m)) {
        const list = r.strings(val, childPath(childPath(path, "extra"), k));
        if (list) extra[k] = list;
      }
    }
  }
  if (username === undefined || groups === undefined) return undefined;
  return { username, groups, ...(uid !== undefined ? { uid } : {}), ...(extra ? { extra } : {}) };
}

function namespaceObject(r: Reader, v: unknown, path: string): JsonObject | undefined {
  const obj = kubernetesObject(r, v, path);
  if (!obj) return undefined;
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  if (obj.kind !== "Namespace" || obj.apiVersion !== "v1") {
    r.report(path, `expected a Namespace (apiVersion: v1, kind: Namespace), got ${String(obj.kind)}`);
    return undefined;
  }
  if (typeof meta.name !== "string" || meta.name === "") {
    r.report(path, "the Namespace needs metadata.name");
    return undefined;
  }
  return obj;
}

function patchOps(r: Reader, v: unknown, path: string): JsonPatchOp[] | undefined {
  const list = r.list(v, path);
  if (!list) return undefined;
  const out: JsonPatchOp[] = [];
  let bad = false;
  list.forEach((item, i) => {
    const p = childPath(path, i);
    const op = r.mapping(item, p);
    if (!op) {
      bad = true;
      return;
    }
    r.known(op, p, ["op", "path", "value", "from"], "a JSON Patch operation");
    const kind = op.op;
    if (typeof kind !== "string" || !(PATCH_OPS as readonly string[]).includes(kind)) {
      r.report(
        kind === undefined ? p : childPath(p, "op"),
        `expected op to be one of ${PATCH_OPS.join(", ")}`,
      );
      bad = true;
      return;
    }
    if (typeof op.path !== "string") {
      r.report(op.path === undefined ? p : childPath(p, "path"), "expected path to be a JSON Pointer string");
      bad = true;
      return;
    }
    out.push({
      op: kind as JsonPatchOp["op"],
      path: op.path,
      ...(typeof op.from === "string" ? { from: op.from } : {}),
      ...("value" in op ? { value: op.value } : {}),
    });
  });
  return bad ? undefined : out;
}

function expectations(r: Reader, v: unknown, path: string): ExpectFields | undefined {
  const obj = r.mapping(v, path);
  if (!obj) return undefined;
  r.known(obj, path, EXPECT_KEYS, "expect");
  const out: ExpectFields = {};
  const at = (k: ExpectKey) => childPath(path, k);
  const set = <K extends ExpectKey>(k: K, value: NonNullable<Expectations[K]> | undefined): void => {
    if (value !== undefined) (out as Record<string, unknown>)[k] = { value, path: at(k) };
  };
  for (const key of EXPECT_KEYS) {
    const value = obj[key];
    if (value === undefined) continue;
    const p = at(key);
    switch (key) {
      case "allowed":
      case "unchanged":
        set(key, r.bool(value, p));
        break;
      case "code":
        if (typeof value !== "number" || !Number.isInteger(value) || value < 100 || value > 599)
          r.report(p, `expected an HTTP status code (an integer from 100 to 599), got ${describe(value)}`);
        else set(key, value);
        break;
      case "reason":
      case "message":
        set(key, r.string(value, p));
        break;
      case "messageMatches": {
        const s = r.string(value, p);
        if (s !== undefined && r.regex(s, p)) set(key, s);
        break;
      }
      case "warnings":
      case "matched":
      case "skipped":
        set(key, r.strings(value, p));
        break;
      case "warningsMatch":
        set(key, r.regexes(value, p));
        break;
      case "auditAnnotations": {
        const m = r.mapping(value, p);
        if (!m) break;
        const annotations: Record<string, string> = {};
        let bad = false;
        for (const [k, val] of Object.entries(m)) {
          const s = r.string(val, childPath(p, k));
          if (s === undefined) bad = true;
          else annotations[k] = s;
        }
        if (!bad) set(key, annotations);
        break;
      }
      case "patched":
        set(key, r.mapping(value, p));
        break;
      case "patch":
        set(key, patchOps(r, value, p));
        break;
    }
  }
  return out;
}

/** Reads the case fields written at one level (defaults or a case). */
function fields(r: Reader, obj: JsonObject, path: string): Fields {
  const out: Fields = {};
  const at = (k: string) => childPath(path, k);
  const objectSource = (inlineKey: string, fileKey: string): At<ObjectSource> | undefined => {
    const inline = obj[inlineKey];
    const file = obj[fileKey];
    if (inline !== undefined && file !== undefined) {
      r.report(at(fileKey), `give ${inlineKey} or ${fileKey}, not both`);
      return undefined;
    }
    if (inline !== undefined) {
      const o = kubernetesObject(r, inline, at(inlineKey));
      return o ? { value: { inline: o }, path: at(inlineKey) } : undefined;
    }
    if (file !== undefined) {
      const ref = r.fileRef(file, at(fileKey));
      return ref ? { value: { file: ref }, path: at(fileKey) } : undefined;
    }
    return undefined;
  };
  const object = objectSource("object", "objectFile");
  if (object) out.object = object;
  const oldObject = objectSource("oldObject", "oldObjectFile");
  if (oldObject) out.oldObject = oldObject;
  if (obj.operation !== undefined) {
    const op = obj.operation;
    if (typeof op === "string" && (OPERATIONS as readonly string[]).includes(op))
      out.operation = { value: op as Operation, path: at("operation") };
    else r.report(at("operation"), `expected one of ${OPERATIONS.join(", ")}, got ${describe(op)}`);
  }
  for (const key of ["subResource", "requestName", "namespace"] as const) {
    if (obj[key] === undefined) continue;
    const s = r.string(obj[key], at(key));
    if (s !== undefined) out[key] = { value: s, path: at(key) };
  }
  if (obj.resource !== undefined) {
    const v = gvr(r, obj.resource, at("resource"), "resource");
    if (v) out.resource = { value: v as unknown as GroupVersionResource, path: at("resource") };
  }
  if (obj.kind !== undefined) {
    const v = gvr(r, obj.kind, at("kind"), "kind");
    if (v) out.kind = { value: v as unknown as GroupVersionKind, path: at("kind") };
  }
  if (obj.userInfo !== undefined) {
    const u = userInfo(r, obj.userInfo, at("userInfo"));
    if (u) out.userInfo = { value: u, path: at("userInfo") };
  }
  if (obj.namespaceObject !== undefined) {
    const ns = namespaceObject(r, obj.namespaceObject, at("namespaceObject"));
    if (ns) out.namespaceObject = { value: ns, path: at("namespaceObject") };
  }
  if (obj.dryRun !== undefined) {
    const b = r.bool(obj.dryRun, at("dryRun"));
    if (b !== undefined) out.dryRun = { value: b, path: at("dryRun") };
  }
  if (obj.defaulting !== undefined) {
    const b = r.bool(obj.defaulting, at("defaulting"));
    if (b !== undefined) out.defaulting = { value: b, path: at("defaulting") };
  }
  if (obj.reviewFile !== undefined) {
    const ref = r.fileRef(obj.reviewFile, at("reviewFile"));
    if (ref) out.review = { value: ref, path: at("reviewFile") };
  }
  if (obj.expect !== undefined) {
    const e = expectations(r, obj.expect, at("expect"));
    if (e) out.expect = e;
  }
  return out;
}

function mergeExpect(lower: ExpectFields | undefined, upper: ExpectFields | undefined): ExpectFields {
  const out: ExpectFields = { ...lower };
  if (!upper) return out;
  for (const slot of EXPECT_SLOTS)
    if (slot.some((k) => upper[k] !== undefined)) for (const k of slot) delete out[k];
  return { ...out, ...upper };
}

/** Fields of `upper` replace those of `lower`; `expect` merges key by key. */
function merge(lower: Fields, upper: Fields): Fields {
  return { ...lower, ...upper, expect: mergeExpect(lower.expect, upper.expect) };
}

function readRules(r: Reader, v: unknown, path: string): AuthorizerRule[] {
  const list = r.list(v, path);
  if (!list) return [];
  const rules: AuthorizerRule[] = [];
  list.forEach((item, i) => {
    const p = childPath(path, i);
    const obj = r.mapping(item, p);
    if (!obj) return;
    r.known(obj, p, RULE_FIELDS, "an authorizer rule");
    const rule: Record<string, string> = {};
    let bad = false;
    for (const f of RULE_FIELDS) {
      if (obj[f] === undefined) continue;
      const s = r.string(obj[f], childPath(p, f));
      if (s === undefined) bad = true;
      else rule[f] = s;
    }
    if (rule.decision === undefined) {
      if (obj.decision === undefined)
        r.report(p, `missing field 'decision' (${AUTHORIZER_DECISIONS.join(", ")})`);
      return;
    }
    if (!(AUTHORIZER_DECISIONS as readonly string[]).includes(rule.decision)) {
      r.report(
        childPath(p, "decision"),
        `expected one of ${AUTHORIZER_DECISIONS.join(", ")}, got ${describe(rule.decision)}`,
      );
      return;
    }
    if (rule.path !== undefined && RULE_RESOURCE_FIELDS.some((f) => rule[f] !== undefined)) {
      r.report(
        childPath(p, "path"),
        "a rule is for a path (non-resource) check or a resource check, not both: drop path or the group/resource/subresource/namespace/name fields",
      );
      return;
    }
    // API groups never contain ':', user groups often do (system:masters): a likely mix-up.
    if (rule.group?.includes(":"))
      r.report(
        childPath(p, "group"),
        `group is the API group of a resource check; for the user's group '${rule.group}' write userGroup`,
        "warning",
      );
    if (!bad) rules.push(rule as unknown as AuthorizerRule);
  });
  return rules;
}

interface Walk {
  readonly r: Reader;
  readonly cases: SuiteCase[];
  readonly names: Map<string, string>;
}

function walkCases(w: Walk, v: unknown, path: string, defaults: Fields, prefix: string): void {
  const { r } = w;
  const list = r.list(v, path);
  if (!list) return;
  if (list.length === 0) r.report(path, "expected at least one case");
  list.forEach((item, i) => {
    const p = childPath(path, i);
    const obj = r.mapping(item, p);
    if (!obj) return;
    if (obj.group !== undefined || obj.cases !== undefined) {
      r.known(obj, p, GROUP_FIELDS, "a group (a group holds only group, defaults and cases)");
      const name =
        obj.group === undefined ? undefined : r.string(obj.group, childPath(p, "group"), { nonEmpty: true });
      if (obj.group === undefined) r.report(p, "a group needs a name: group: <name>");
      let own: Fields = {};
      if (obj.defaults !== undefined) {
        const d = r.mapping(obj.defaults, childPath(p, "defaults"));
        if (d) {
          r.known(d, childPath(p, "defaults"), CASE_FIELDS, "defaults");
          own = fields(r, d, childPath(p, "defaults"));
        }
      }
      if (obj.cases === undefined) r.report(p, "missing field 'cases'");
      else walkCases(w, obj.cases, childPath(p, "cases"), merge(defaults, own), `${prefix}${name ?? "?"} / `);
      return;
    }
    const errorsBefore = r.errors;
    r.known(obj, p, ["name", ...CASE_FIELDS], "a case");
    const name =
      obj.name === undefined ? undefined : r.string(obj.name, childPath(p, "name"), { nonEmpty: true });
    if (obj.name === undefined) r.report(p, "missing field 'name' (every case needs a name for the report)");
    const own = fields(r, obj, p);
    const merged = merge(defaults, own);
    if (name === undefined) return;
    const full = `${prefix}${name}`;
    const earlier = w.names.get(full);
    if (earlier !== undefined) {
      r.report(childPath(p, "name"), `case name '${full}' is already used at ${earlier}`);
      return;
    }
    w.names.set(full, p);
    // Checks across fields would only repeat what is already reported (a misspelt allowed is not missing).
    if (r.errors > errorsBefore) return;
    const c = resolveCase(r, full, p, own, merged);
    if (c) w.cases.push(c);
  });
}

function resolveCase(r: Reader, name: string, path: string, own: Fields, m: Fields): SuiteCase | undefined {
  if (m.review) return reviewCase(r, name, path, own, m, m.review);
  const errorsBefore = r.errors;
  // oldObject makes an UPDATE unless the case itself names the operation (a default's CREATE yields).
  const operation: Operation =
    own.operation?.value ??
    (m.oldObject && m.operation?.value !== "DELETE" ? "UPDATE" : (m.operation?.value ?? "CREATE"));
  let object = m.object;
  let oldObject = m.oldObject;
  if (operation === "DELETE") {
    // A DELETE carries only the stored object; either key may name it.
    if (object && oldObject) {
      const ownOnly = own.object ? object : own.oldObject ? oldObject : undefined;
      if (!ownOnly) {
        r.report(path, "a DELETE has only the object being deleted: give object or oldObject, not both");
        return undefined;
      }
      object = ownOnly;
    } else object = object ?? oldObject;
    oldObject = undefined;
    if (!object) r.report(path, "a DELETE case needs the object being deleted (object or objectFile)");
  } else {
    if (!object) r.report(path, "missing object or objectFile: the object the request writes");
    if (operation === "UPDATE" && !oldObject)
      r.report(path, "an UPDATE case needs oldObject or oldObjectFile (the object as stored before)");
    if (operation !== "UPDATE" && oldObject)
      r.report(oldObject.path, `oldObject is for UPDATE (and DELETE), not ${operation}`);
  }
  const expect = m.expect ?? {};
  if (expect.allowed === undefined)
    r.report(
      own.expect ? childPath(path, "expect") : path,
      "missing expect.allowed: every case says whether the request is allowed",
    );
  if (r.errors > errorsBefore || !object) return undefined;
  const values: Record<string, unknown> = {};
  const expectPaths: Partial<Record<ExpectKey, string>> = {};
  for (const [k, at] of Object.entries(expect)) {
    values[k] = at.value;
    expectPaths[k as ExpectKey] = at.path;
  }
  return {
    name,
    path,
    location: r.map.locate(path),
    operation,
    object,
    ...(oldObject ? { oldObject } : {}),
    ...(m.subResource ? { subResource: m.subResource.value } : {}),
    ...(m.resource ? { resource: m.resource.value } : {}),
    ...(m.kind ? { kind: m.kind.value } : {}),
    ...(m.requestName ? { requestName: m.requestName.value } : {}),
    ...(own.namespace ? { namespace: own.namespace.value } : {}),
    ...(!own.namespace && m.namespace ? { defaultNamespace: m.namespace.value } : {}),
    ...(m.userInfo ? { userInfo: m.userInfo.value } : {}),
    ...(m.namespaceObject ? { namespaceObject: m.namespaceObject } : {}),
    ...(m.dryRun ? { dryRun: m.dryRun.value } : {}),
    ...(m.defaulting ? { defaulting: m.defaulting.value } : {}),
    expect: values as Expectations,
    expectPaths,
  };
}

/** The fields a saved AdmissionReview's request carries itself: a review case cannot set them. */
const REQUEST_FIELDS = [
  "object",
  "oldObject",
  "operation",
  "subResource",
  "resource",
  "kind",
  "requestName",
  "namespace",
  "userInfo",
  "dryRun",
  "defaulting",
] as const;

/** A case given as a saved AdmissionReview: defaults' request fields yield to it, its own are an error. */
function reviewCase(
  r: Reader,
  name: string,
  path: string,
  own: Fields,
  m: Fields,
  review: At<FileRef>,
): SuiteCase | undefined {
  const errorsBefore = r.errors;
  for (const k of REQUEST_FIELDS) {
    const at = own[k];
    if (at)
      r.report(
        at.path,
        `reviewFile gives the whole request: drop ${at.path.slice(at.path.lastIndexOf(".") + 1)}`,
      );
  }
  const expect = m.expect ?? {};
  if (expect.allowed === undefined)
    r.report(
      own.expect ? childPath(path, "expect") : path,
      "missing expect.allowed: every case says whether the request is allowed",
    );
  if (r.errors > errorsBefore) return undefined;
  const values: Record<string, unknown> = {};
  const expectPaths: Partial<Record<ExpectKey, string>> = {};
  for (const [k, at] of Object.entries(expect)) {
    values[k] = at.value;
    expectPaths[k as ExpectKey] = at.path;
  }
  return {
    name,
    path,
    location: r.map.locate(path),
    review,
    ...(m.namespaceObject ? { namespaceObject: m.namespaceObject } : {}),
    expect: values as Expectations,
    expectPaths,
  };
}

function yamlProblem(
  file: string,
  e: { message: string; linePos?: readonly { line: number; col: number }[] },
): Diagnostic {
  const pos = e.linePos?.[0];
  const first = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "");
  return {
    code: "TE_SUITE",
    severity: "error",
    message: `not valid YAML: ${first}`,
    location: { file, line: pos?.line ?? 1, column: pos?.col ?? 1 },
  };
}

/** Parses one suite file's text. */
export function parseSuiteText(text: string, file: string): ParsedSuite {
  const lineCounter = new LineCounter();
  const positions = new TextPositions(file, lineCounter);
  const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: true });
  const docs = Array.isArray(parsed) ? parsed : [];
  const whole: SourceLocation = { file, line: 1, column: 1 };
  const fileName = suiteNameFromFile(file);
  const fail = (message: string, location: SourceLocation = whole): ParsedSuite => ({
    suite: undefined,
    name: fileName,
    diagnostics: [{ code: "TE_SUITE", severity: "error", message, location }],
  });
  const nonEmpty = docs.filter((d) => d.contents !== null || d.errors.length > 0);
  const doc = nonEmpty[0];
  if (!doc) return fail("the file is empty; expected a PolicyTest document");
  if (doc.errors.length > 0)
    return { suite: undefined, name: fileName, diagnostics: doc.errors.map((e) => yamlProblem(file, e)) };
  const second = nonEmpty[1];
  if (second)
    return fail(
      "a suite file holds one document; split the suites into files",
      positions.at(second.contents?.range?.[0] ?? second.range[0]),
    );
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    return fail(`cannot read the document: ${e instanceof Error ? e.message : String(e)}`);
  }
  const contents = doc.contents;
  if (!contents) return fail("the file is empty; expected a PolicyTest document");
  const r = new Reader(file, new YamlSourceMap(positions, doc, contents), doc, positions);
  const top = r.mapping(root, "");
  if (!top) return { suite: undefined, name: fileName, diagnostics: r.diagnostics };
  r.known(top, "", TOP_FIELDS, "a PolicyTest");
  if (top.apiVersion !== SUITE_API_VERSION || top.kind !== SUITE_KIND)
    r.report(
      top.kind !== SUITE_KIND && top.kind !== undefined
        ? "kind"
        : top.apiVersion !== undefined
          ? "apiVersion"
          : "",
      `expected apiVersion: ${SUITE_API_VERSION} and kind: ${SUITE_KIND}, got ${describe(top.apiVersion)} and ${describe(top.kind)}`,
    );
  let name = fileName;
  if (top.metadata !== undefined) {
    const meta = r.mapping(top.metadata, "metadata");
    if (meta) {
      r.known(meta, "metadata", METADATA_FIELDS, "metadata");
      if (meta.name !== undefined) name = r.string(meta.name, "metadata.name", { nonEmpty: true }) ?? name;
      if (meta.description !== undefined) r.string(meta.description, "metadata.description");
    }
  }
  let policies: At<FileRef>[] = [];
  if (top.policies === undefined)
    r.report("", "missing field 'policies': the policy files or directories to test");
  else {
    policies = r.fileRefs(top.policies, "policies") ?? [];
    if (Array.isArray(top.policies) && top.policies.length === 0)
      r.report("policies", "expected at least one policy file or directory");
  }
  const resources = top.resources === undefined ? [] : (r.fileRefs(top.resources, "resources") ?? []);
  const authorizer = top.authorizer === undefined ? [] : readRules(r, top.authorizer, "authorizer");
  let defaults: Fields = {};
  if (top.defaults !== undefined) {
    const d = r.mapping(top.defaults, "defaults");
    if (d) {
      r.known(d, "defaults", CASE_FIELDS, "defaults");
      defaults = fields(r, d, "defaults");
    }
  }
  const w: Walk = { r, cases: [], names: new Map() };
  if (top.cases === undefined) r.report("", "missing field 'cases'");
  else walkCases(w, top.cases, "cases", defaults, "");

  const byPosition = (d: Diagnostic): number =>
    d.location ? d.location.line * 1_000_000 + d.location.column : Number.MAX_SAFE_INTEGER;
  const diagnostics = [...r.diagnostics].sort((a, b) => byPosition(a) - byPosition(b));
  if (r.errors > 0) return { suite: undefined, name, diagnostics };
  return {
    suite: {
      file,
      name,
      policies,
      resources,
      authorizer,
      cases: w.cases,
      locate: (path) => r.map.locate(path),
    },
    name,
    diagnostics,
  };
}
