/**
 * metadata: an object's name, namespace, labels and annotations, checked as apimachinery's
 * ObjectMeta validation checks them (names, label keys and values).
 */
import { dns1123Subdomain, labelValue, qualifiedName } from "./fields.ts";
import type { YamlMap, YamlReader } from "../yaml/reader.ts";
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
  return {
    name,
    namespace,
    labels: readStringMap(r, meta, "labels", true),
    annotations: readStringMap(r, meta, "annotations", false),
  };
}
