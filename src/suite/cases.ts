/**
 * A suite's cases: the fields a case (or a level of defaults) may give, groups that nest cases
 * under shared defaults, and each case resolved into a SuiteCase: defaults merged, the operation
 * decided, and the combinations that cannot make a request refused.
 */
import {
  type GroupVersionKind,
  type GroupVersionResource,
  OPERATIONS,
  type UserInfo,
} from "../request/types.ts";
import type { Operation } from "../policy/types.ts";
import type { Field, YamlMap, YamlReader } from "../yaml/reader.ts";
import { childPath } from "../yaml/source-map.ts";
import { type ExpectFields, expectations, mergeExpect } from "./expect.ts";
import { gvr, kubernetesObject, namespaceObject, userInfo } from "./objects.ts";
import { decode, describe, fileRef, type Place, report, scalar, text } from "./read.ts";
import type {
  At,
  Expectations,
  ExpectKey,
  FileRef,
  JsonObject,
  ObjectSource,
  ReviewCase,
  SuiteCase,
} from "./types.ts";

export const CASE_FIELDS = [
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

/** The case fields written at one level (defaults, a group's defaults, a case), each with its path. */
export interface Fields {
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
  /** Whether the API server's defaults are applied to the case's objects (default: the run's). */
  defaulting?: At<boolean>;
  /** A saved AdmissionReview whose request the case evaluates as it is. */
  review?: At<FileRef>;
  expect?: ExpectFields;
}

/** The object given inline under `inlineKey` or by file under `fileKey`, not both. */
function objectSource(
  obj: YamlMap,
  dir: string,
  inlineKey: string,
  fileKey: string,
): At<ObjectSource> | undefined {
  const { r } = obj;
  const inline = obj.get(inlineKey);
  const file = obj.get(fileKey);
  if (inline !== undefined && file !== undefined) {
    report(r, file, `give ${inlineKey} or ${fileKey}, not both`);
    return undefined;
  }
  if (inline !== undefined) {
    if (!kubernetesObject(r, inline)) return undefined;
    return { value: { inline: decode(r, inline) as JsonObject }, path: inline.path };
  }
  if (file !== undefined) {
    const ref = fileRef(r, file, dir);
    return ref ? { value: { file: ref }, path: file.path } : undefined;
  }
  return undefined;
}

/** Reads the case fields written at one level (defaults or a case). */
export function fields(obj: YamlMap, dir: string): Fields {
  const { r } = obj;
  const out: Fields = {};
  const at = <T>(f: Field, value: T): At<T> => ({ value, path: f.path });
  const object = objectSource(obj, dir, "object", "objectFile");
  if (object) out.object = object;
  const oldObject = objectSource(obj, dir, "oldObject", "oldObjectFile");
  if (oldObject) out.oldObject = oldObject;
  const operation = obj.get("operation");
  if (operation !== undefined) {
    const op = scalar(operation);
    if (typeof op === "string" && (OPERATIONS as readonly string[]).includes(op))
      out.operation = at(operation, op as Operation);
    else report(r, operation, `expected one of ${OPERATIONS.join(", ")}, got ${describe(operation.node)}`);
  }
  for (const key of ["subResource", "requestName", "namespace"] as const) {
    const f = obj.get(key);
    if (f === undefined) continue;
    const s = text(r, f);
    if (s !== undefined) out[key] = at(f, s);
  }
  const resource = obj.get("resource");
  if (resource !== undefined) {
    const v = gvr(r, resource, "resource");
    if (v) out.resource = at(resource, v as unknown as GroupVersionResource);
  }
  const kind = obj.get("kind");
  if (kind !== undefined) {
    const v = gvr(r, kind, "kind");
    if (v) out.kind = at(kind, v as unknown as GroupVersionKind);
  }
  const user = obj.get("userInfo");
  if (user !== undefined) {
    const u = userInfo(r, user);
    if (u) out.userInfo = at(user, u);
  }
  const ns = obj.get("namespaceObject");
  if (ns !== undefined) {
    const o = namespaceObject(r, ns);
    if (o) out.namespaceObject = at(ns, o);
  }
  const dryRun = obj.get("dryRun");
  if (dryRun !== undefined) {
    const b = r.boolean(dryRun);
    if (b !== undefined) out.dryRun = at(dryRun, b);
  }
  const defaulting = obj.get("defaulting");
  if (defaulting !== undefined) {
    const b = r.boolean(defaulting);
    if (b !== undefined) out.defaulting = at(defaulting, b);
  }
  const review = obj.get("reviewFile");
  if (review !== undefined) {
    const ref = fileRef(r, review, dir);
    if (ref) out.review = at(review, ref);
  }
  const expect = obj.get("expect");
  if (expect !== undefined) {
    const e = expectations(r, expect);
    if (e) out.expect = e;
  }
  return out;
}

/** Fields of `upper` replace those of `lower`; `expect` merges key by key. */
export function merge(lower: Fields, upper: Fields): Fields {
  return { ...lower, ...upper, expect: mergeExpect(lower.expect, upper.expect) };
}

/** Where the walk over a suite's cases collects them, and the names given so far. */
export interface Walk {
  readonly r: YamlReader;
  readonly dir: string;
  readonly cases: SuiteCase[];
  readonly names: Map<string, string>;
}

/**
 * A group: its own defaults merged over the ones above, then its cases with its name as a prefix.
 * `groups` are the names of the groups it is in.
 */
function walkGroup(w: Walk, obj: YamlMap, defaults: Fields, prefix: string, groups: readonly string[]): void {
  const { r } = w;
  obj.known(GROUP_FIELDS, "a group (a group holds only group, defaults and cases)");
  const group = obj.get("group");
  const name = group === undefined ? undefined : text(r, group, { nonEmpty: true });
  if (group === undefined) report(r, obj, "a group needs a name: group: <name>");
  let own: Fields = {};
  const d = obj.get("defaults");
  if (d !== undefined) {
    const m = r.mapping(d);
    if (m) {
      m.known(CASE_FIELDS, "defaults");
      own = fields(m, w.dir);
    }
  }
  const cases = obj.get("cases");
  if (cases === undefined) report(r, obj, "missing field 'cases'");
  else walkCases(w, cases, merge(defaults, own), `${prefix}${name ?? "?"} / `, [...groups, name ?? "?"]);
}

/** One case: its fields over the defaults, named uniquely, then resolved. */
function walkCase(w: Walk, obj: YamlMap, defaults: Fields, prefix: string, groups: readonly string[]): void {
  const { r } = w;
  const errorsBefore = r.errors;
  obj.known(["name", ...CASE_FIELDS], "a case");
  const nameField = obj.get("name");
  const name = nameField === undefined ? undefined : text(r, nameField, { nonEmpty: true });
  if (nameField === undefined)
    report(r, obj, "missing field 'name' (every case needs a name for the report)");
  const own = fields(obj, w.dir);
  const merged = merge(defaults, own);
  if (name === undefined) return;
  const full = `${prefix}${name}`;
  const earlier = w.names.get(full);
  const namePlace = { path: obj.child("name"), offset: nameField?.offset ?? obj.offset };
  if (earlier !== undefined) {
    report(r, namePlace, `case name '${full}' is already used at ${earlier}`);
    return;
  }
  w.names.set(full, obj.path);
  // Checks across fields would only repeat what is already reported (a misspelt allowed is not missing).
  if (r.errors > errorsBefore) return;
  const c = resolveCase(r, { name: full, namePath: [...groups, name] }, obj, own, merged);
  if (c) w.cases.push(c);
}

/** A list of cases and groups, each given `defaults` and named after `prefix` (and `groups`). */
export function walkCases(
  w: Walk,
  f: Field,
  defaults: Fields,
  prefix: string,
  groups: readonly string[] = [],
): void {
  const { r } = w;
  const list = r.list(f);
  if (!list) return;
  if (list.length === 0) report(r, f, "expected at least one case");
  for (const item of list) {
    const obj = r.mapping(item);
    if (!obj) continue;
    if (obj.has("group") || obj.has("cases")) walkGroup(w, obj, defaults, prefix, groups);
    else walkCase(w, obj, defaults, prefix, groups);
  }
}

/** The object and stored object of a case's request, as its operation needs them. */
function requestObjects(
  r: YamlReader,
  at: Place,
  operation: Operation,
  own: Fields,
  m: Fields,
): { object?: At<ObjectSource>; oldObject?: At<ObjectSource> } | undefined {
  let object = m.object;
  let oldObject = m.oldObject;
  if (operation === "DELETE") {
    // A DELETE carries only the stored object; either key may name it.
    if (object && oldObject) {
      const ownOnly = own.object ? object : own.oldObject ? oldObject : undefined;
      if (!ownOnly) {
        report(r, at, "a DELETE has only the object being deleted: give object or oldObject, not both");
        return undefined;
      }
      object = ownOnly;
    } else object = object ?? oldObject;
    oldObject = undefined;
    if (!object) report(r, at, "a DELETE case needs the object being deleted (object or objectFile)");
  } else {
    if (!object) report(r, at, "missing object or objectFile: the object the request writes");
    if (operation === "UPDATE" && !oldObject)
      report(r, at, "an UPDATE case needs oldObject or oldObjectFile (the object as stored before)");
    if (operation !== "UPDATE" && oldObject)
      report(
        r,
        { path: oldObject.path, offset: at.offset },
        `oldObject is for UPDATE (and DELETE), not ${operation}`,
      );
  }
  return { ...(object ? { object } : {}), ...(oldObject ? { oldObject } : {}) };
}

function resolveCase(
  r: YamlReader,
  { name, namePath }: Pick<SuiteCase, "name" | "namePath">,
  obj: YamlMap,
  own: Fields,
  m: Fields,
): SuiteCase | undefined {
  if (m.review) return reviewCase(r, { name, namePath }, obj, own, m, m.review);
  const errorsBefore = r.errors;
  const path = obj.path;
  // oldObject makes an UPDATE unless the case itself names the operation (a default's CREATE yields).
  const operation: Operation =
    own.operation?.value ??
    (m.oldObject && m.operation?.value !== "DELETE" ? "UPDATE" : (m.operation?.value ?? "CREATE"));
  const objects = requestObjects(r, obj, operation, own, m);
  if (!objects) return undefined;
  const { object, oldObject } = objects;
  const expect = resolveExpect(r, obj, own, m);
  if (r.errors > errorsBefore || !object || !expect) return undefined;
  return {
    name,
    namePath,
    path,
    location: r.locate(path, obj.offset),
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
    ...expect,
  };
}

/** A case's expectations, merged over its defaults' and with their paths; `expect.allowed` is required. */
function resolveExpect(
  r: YamlReader,
  obj: YamlMap,
  own: Fields,
  m: Fields,
): Pick<SuiteCase, "expect" | "expectPaths"> | undefined {
  const expect = m.expect ?? {};
  if (expect.allowed === undefined) {
    report(
      r,
      own.expect ? { path: childPath(obj.path, "expect"), offset: obj.offset } : obj,
      "missing expect.allowed: every case says whether the request is allowed",
    );
    return undefined;
  }
  const values: Record<string, unknown> = {};
  const expectPaths: Partial<Record<ExpectKey, string>> = {};
  for (const [k, at] of Object.entries(expect)) {
    values[k] = at.value;
    expectPaths[k as ExpectKey] = at.path;
  }
  return { expect: values as Expectations, expectPaths };
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
  r: YamlReader,
  { name, namePath }: Pick<SuiteCase, "name" | "namePath">,
  obj: YamlMap,
  own: Fields,
  m: Fields,
  review: At<FileRef>,
): ReviewCase | undefined {
  const errorsBefore = r.errors;
  for (const k of REQUEST_FIELDS) {
    const at = own[k];
    if (at)
      report(
        r,
        { path: at.path, offset: obj.offset },
        `reviewFile gives the whole request: drop ${at.path.slice(at.path.lastIndexOf(".") + 1)}`,
      );
  }
  const expect = resolveExpect(r, obj, own, m);
  if (r.errors > errorsBefore || !expect) return undefined;
  return {
    name,
    namePath,
    path: obj.path,
    location: r.locate(obj.path, obj.offset),
    review,
    ...(m.namespaceObject ? { namespaceObject: m.namespaceObject } : {}),
    ...expect,
  };
}
