/**
 * The structured values a test case is made of: Kubernetes objects given inline, the request's
 * resource and kind, its userInfo, the namespace object, and the authorizer's rules.
 */
import { isMap } from "yaml";
import { AUTHORIZER_DECISIONS, type AuthorizerRule } from "../cel/index.ts";
import type { UserInfo } from "../request/types.ts";
import type { Field, YamlMap, YamlReader } from "../yaml/reader.ts";
import { decode, describe, report, scalar, strings, text } from "./read.ts";
import type { JsonObject } from "./types.ts";

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

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A mapping with a non-empty apiVersion and kind and, if it has metadata, a mapping there. */
export function kubernetesObject(r: YamlReader, f: Field): YamlMap | undefined {
  const obj = r.mapping(f);
  if (!obj) return undefined;
  let ok = true;
  for (const key of ["apiVersion", "kind"]) {
    const value = obj.get(key);
    const v = scalar(value);
    if (typeof v !== "string" || v === "") {
      report(
        r,
        value ?? obj,
        `expected a Kubernetes object: ${key} must be a non-empty string${value === undefined ? " (missing)" : `, got ${describe(value.node)}`}`,
      );
      ok = false;
    }
  }
  const metadata = obj.get("metadata");
  if (metadata !== undefined && !isMap(metadata.node)) {
    report(r, metadata, `expected a mapping, got ${describe(metadata.node)}`);
    ok = false;
  }
  return ok ? obj : undefined;
}

/** A group/version/resource or group/version/kind, as a plain object. */
export function gvr(r: YamlReader, f: Field, last: "resource" | "kind"): JsonObject | undefined {
  const obj = r.mapping(f);
  if (!obj) return undefined;
  const fields = ["group", "version", last];
  obj.known(fields, last === "resource" ? "a resource" : "a kind");
  let ok = true;
  for (const name of fields) {
    const value = obj.get(name);
    if (value === undefined) {
      report(r, obj, `missing field '${name}' (write group: "" for the core group)`);
      ok = false;
    } else if (text(r, value, { nonEmpty: name !== "group" }) === undefined) ok = false;
  }
  return ok ? (decode(r, f) as JsonObject) : undefined;
}

export function userInfo(r: YamlReader, f: Field): UserInfo | undefined {
  const obj = r.mapping(f);
  if (!obj) return undefined;
  obj.known(["username", "groups", "uid", "extra"], "userInfo");
  const usernameField = obj.get("username");
  if (usernameField === undefined) {
    report(r, obj, "missing field 'username'");
    return undefined;
  }
  const username = r.string(usernameField);
  const groupsField = obj.get("groups");
  const groups = groupsField === undefined ? [] : strings(r, groupsField);
  const uidField = obj.get("uid");
  const uid = uidField === undefined ? undefined : r.string(uidField);
  let extra: Record<string, string[]> | undefined;
  const extraField = obj.get("extra");
  if (extraField !== undefined) {
    const m = r.mapping(extraField);
    if (m) {
      extra = {};
      for (const k of m.keys()) {
        const list = strings(r, m.get(k) as Field);
        if (list) extra[k] = list;
      }
    }
  }
  if (username === undefined || groups === undefined) return undefined;
  return { username, groups, ...(uid !== undefined ? { uid } : {}), ...(extra ? { extra } : {}) };
}

/** A v1 Namespace with a name, as a plain object. */
export function namespaceObject(r: YamlReader, f: Field): JsonObject | undefined {
  const map = kubernetesObject(r, f);
  if (!map) return undefined;
  const obj = decode(r, f) as JsonObject;
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  if (obj.kind !== "Namespace" || obj.apiVersion !== "v1") {
    report(r, f, `expected a Namespace (apiVersion: v1, kind: Namespace), got ${String(obj.kind)}`);
    return undefined;
  }
  if (typeof meta.name !== "string" || meta.name === "") {
    report(r, f, "the Namespace needs metadata.name");
    return undefined;
  }
  return obj;
}

/** One authorizer rule; undefined (reported) when it is malformed. */
function readRule(r: YamlReader, item: Field): AuthorizerRule | undefined {
  const obj = r.mapping(item);
  if (!obj) return undefined;
  obj.known(RULE_FIELDS, "an authorizer rule");
  const rule: Record<string, string> = {};
  let bad = false;
  for (const name of RULE_FIELDS) {
    const value = obj.get(name);
    if (value === undefined) continue;
    const s = r.string(value);
    if (s === undefined) bad = true;
    else rule[name] = s;
  }
  if (rule.decision === undefined) {
    if (!obj.has("decision"))
      report(r, item, `missing field 'decision' (${AUTHORIZER_DECISIONS.join(", ")})`);
    return undefined;
  }
  const at = (name: string) => ({ path: obj.child(name), offset: obj.get(name)?.offset ?? obj.offset });
  if (!(AUTHORIZER_DECISIONS as readonly string[]).includes(rule.decision)) {
    report(
      r,
      at("decision"),
      `expected one of ${AUTHORIZER_DECISIONS.join(", ")}, got ${describe(obj.get("decision")?.node)}`,
    );
    return undefined;
  }
  if (rule.path !== undefined && RULE_RESOURCE_FIELDS.some((name) => rule[name] !== undefined)) {
    report(
      r,
      at("path"),
      "a rule is for a path (non-resource) check or a resource check, not both: drop path or the group/resource/subresource/namespace/name fields",
    );
    return undefined;
  }
  // API groups never contain ':', user groups often do (system:masters): a likely mix-up.
  if (rule.group?.includes(":"))
    report(
      r,
      at("group"),
      `group is the API group of a resource check; for the user's group '${rule.group}' write userGroup`,
      "warning",
    );
  return bad ? undefined : (rule as unknown as AuthorizerRule);
}

/** The authorizer's rules, in order; malformed ones are reported and left out. */
export function readRules(r: YamlReader, f: Field): AuthorizerRule[] {
  const list = r.list(f);
  if (!list) return [];
  const rules: AuthorizerRule[] = [];
  for (const item of list) {
    const rule = readRule(r, item);
    if (rule) rules.push(rule);
  }
  return rules;
}
