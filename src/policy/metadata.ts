/**
 * metadata: an object's name, namespace, labels, annotations and owner references, checked as
 * apimachinery's ObjectMeta validation checks them (names, label keys and values,
 * ValidateOwnerReferences).
 */
import { dns1123Subdomain, labelValue, qualifiedName } from "./fields.ts";
import type { DiagnosticCode } from "../errors.ts";
import type { Field, YamlMap, YamlReader } from "../yaml/reader.ts";
import { reportFormat, requiredString } from "./read.ts";

// Known fields per structure, for the unknown-field warnings (kubectl's strict decoding rejects them).
export const TOP_FIELDS = ["apiVersion", "kind", "metadata", "spec", "status"];
/** v1.ObjectMeta's fields, as a strict decoder knows them. */
export const METADATA_FIELDS: readonly string[] = [
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
];

/** v1.OwnerReference's fields. */
const OWNER_REFERENCE_FIELDS: readonly string[] = [
  "apiVersion",
  "kind",
  "name",
  "uid",
  "controller",
  "blockOwnerDeletion",
];

/** api/validation/objectmeta.go BannedOwners: kinds that may not own anything. */
const BANNED_OWNERS: ReadonlySet<string> = new Set(["v1/Event", "events.k8s.io/v1/Event"]);

/**
 * apimachinery api/validation/objectmeta.go ValidateOwnerReferences: each reference names its
 * apiVersion (`<group>/<version>` or `<version>`), kind, name and uid, no banned kind, and at most
 * one is the controller.
 */
function checkOwnerReferences(reader: YamlReader, meta: YamlMap): void {
  const items = meta.list("ownerReferences");
  if (!items) return;
  // The object stays read (an error, not a rejected document): the API server looks at the API
  // version first, and check reports what it says of that too (compile/served.ts).
  const r = {
    mapping: (f: Field) => reader.mapping(f),
    string: (f: Field) => reader.string(f),
    boolean: (f: Field) => reader.boolean(f),
    report: (code: DiagnosticCode, path: string, offset: number, message: string) =>
      reader.diagnostics.push({
        code,
        severity: "error",
        message,
        path,
        location: reader.locate(path, offset),
        ...(reader.object ? { object: reader.object } : {}),
      }),
  };
  let controller: string | undefined;
  for (const item of items) {
    const ref = r.mapping(item);
    if (!ref) continue;
    ref.known(OWNER_REFERENCE_FIELDS);
    const value = (key: string): string | undefined => {
      const f = ref.field(key);
      if (!f) {
        r.report("PE_MISSING_FIELD", ref.child(key), ref.offset, "must not be empty");
        return undefined;
      }
      const v = r.string(f);
      if (v === "") r.report("PE_MISSING_FIELD", f.path, f.offset, "must not be empty");
      return v || undefined;
    };
    const apiVersion = value("apiVersion");
    const kind = value("kind");
    const name = value("name");
    value("uid");
    const parts = apiVersion?.split("/") ?? [];
    const apiField = ref.field("apiVersion");
    if (apiVersion !== undefined && apiField && (parts.length > 2 || parts[parts.length - 1] === ""))
      r.report("PE_FIELD_VALUE", apiField.path, apiField.offset, "must be <group>/<version> or <version>");
    if (apiVersion !== undefined && kind !== undefined && BANNED_OWNERS.has(`${apiVersion}/${kind}`))
      r.report(
        "PE_FIELD_VALUE",
        item.path,
        item.offset,
        `${apiVersion}, Kind=${kind} is disallowed from being an owner`,
      );
    const isController = ref.field("controller");
    if (isController && r.boolean(isController) === true) {
      const current = `${kind ?? ""}/${name ?? ""}`;
      if (controller === undefined) controller = current;
      else
        r.report(
          "PE_FIELD_VALUE",
          meta.child("ownerReferences"),
          item.offset,
          `Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${current}`,
        );
    }
  }
}

interface Metadata {
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

export function readStringMap(
  r: YamlReader,
  view: YamlMap | undefined,
  key: string,
  checkValue: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  const m = view?.map(key);
  if (!m) return out;
  for (const k of m.keys()) {
    const keyErrors = qualifiedName(k);
    for (const e of keyErrors)
      r.report("PE_FIELD_VALUE", m.child(k), m.keyOffset(k), `key ${e}; got ${JSON.stringify(k)}`);
    const f = m.field(k);
    if (!f) {
      // `key:` with no value reads as "" in Kubernetes (null → zero value).
      out[k] = "";
      continue;
    }
    const v = r.string(f);
    if (v === undefined) continue;
    if (checkValue) reportFormat(r, f, v, labelValue(v));
    out[k] = v;
  }
  return out;
}

export function readMetadata(r: YamlReader, top: YamlMap, requireDnsName: boolean): Metadata {
  const meta = top.map("metadata");
  if (!meta) {
    if (!top.field("metadata"))
      top.r.report("PE_MISSING_FIELD", "metadata.name", top.offset, 'missing required field "metadata.name"');
    return { name: undefined, namespace: undefined, labels: {}, annotations: {} };
  }
  meta.known(METADATA_FIELDS);
  let name = requiredString(meta, "name");
  const nameField = meta.field("name");
  if (
    name !== undefined &&
    requireDnsName &&
    nameField &&
    !reportFormat(r, nameField, name, dns1123Subdomain(name))
  ) {
    name = undefined;
  }
  const namespace = meta.string("namespace");
  checkOwnerReferences(r, meta);
  return {
    name,
    namespace,
    labels: readStringMap(r, meta, "labels", true),
    annotations: readStringMap(r, meta, "annotations", false),
  };
}
