/**
 * Generates src/kube/schemas/data/kubernetes-<release>.json, the compact structural schemas of the
 * built-in Kubernetes kinds that celgate types CEL expressions and merges ApplyConfigurations with.
 *
 *   node tools/gen-kube-schemas.mjs <client-go git dir> <tag, e.g. v0.36.3>
 *
 * The source is k8s.io/client-go at the tag released with the Kubernetes version (client-go v0.N.x is
 * Kubernetes 1.N.x), read with `git show` from a clone:
 *
 * - applyconfigurations/internal/internal.go: the structured-merge-diff schema of every built-in type,
 *   which applyconfiguration-gen converts from the API server's own OpenAPI definitions with
 *   kube-openapi's schemaconv. It gives every type's fields, the element types of lists and maps, and
 *   the merge markers (x-kubernetes-list-type, -list-map-keys, -map-type) as server-side apply reads
 *   them, plus the field defaults that keyed lists fall back on.
 * - applyconfigurations/<group>/<version>/*.go: the Go type of each field, which gives the OpenAPI
 *   formats the merge schema folds away (int32 and int64 are both `numeric`, []byte is a `string`).
 * - The types that define their own OpenAPI schema in k8s.io/apimachinery (metav1.Time and
 *   MicroTime: string date-time; intstr.IntOrString: format int-or-string, oneOf integer|string in
 *   OpenAPI v3; resource.Quantity: oneOf string|number in v3 and no type; runtime.RawExtension:
 *   object), from their OpenAPISchemaType / OpenAPISchemaFormat / OpenAPIV3OneOfTypes methods.
 *
 * The output is OpenAPI v3 as the API server's schema resolver returns it for CEL (a `$ref` names a
 * definition and replaces the node it stands in, as resolver.PopulateRefs does), reduced to what
 * typing and merging read: no descriptions, no `required` (the merge schema does not carry it).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const [gitDir, tag] = process.argv.slice(2);
if (!gitDir || !/^v0\.\d+\.\d+$/.test(tag ?? "")) {
  console.error("usage: node tools/gen-kube-schemas.mjs <client-go git dir> <tag v0.N.x>");
  process.exit(2);
}
const release = `1.${tag.split(".")[1]}`;
const kubernetesVersion = `v1.${tag.slice(3)}`;

function git(...args) {
  return execFileSync("git", ["--git-dir", gitDir, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
}

// --- the merge schema ------------------------------------------------------------------------------

const internal = git("show", `${tag}:applyconfigurations/internal/internal.go`);
const start = internal.indexOf("typed.YAMLObject(`");
const end = internal.lastIndexOf("`)");
if (start < 0 || end < start) throw new Error("no schemaYAML in internal.go");
const smd = parse(internal.slice(start + "typed.YAMLObject(`".length, end));

// --- Go field types of the apply configurations ---------------------------------------------------

/** Definition name → JSON field name → Go type, from `type XApplyConfiguration struct { ... }`. */
const goFields = new Map();
const files = git("ls-tree", "-r", "--name-only", tag, "applyconfigurations")
  .split("\n")
  .filter((f) => /^applyconfigurations\/[a-z0-9]+\/v[0-9a-z]+\/[a-z0-9]+\.go$/.test(f));
for (const file of files) {
  const [, pkg, version] = file.split("/");
  const prefix = pkg === "meta" ? "io.k8s.apimachinery.pkg.apis.meta" : `io.k8s.api.${pkg}`;
  const text = git("show", `${tag}:${file}`);
  for (const m of text.matchAll(/^type (\w+)ApplyConfiguration struct \{\n([\s\S]*?)^\}/gm)) {
    const fields = new Map();
    for (const f of m[2].matchAll(/^\t\*?\w+(?:\.\w+)?\s+(\S+)\s+`json:"([^,"]*)/gm)) {
      if (f[2] !== "") fields.set(f[2], f[1]);
    }
    goFields.set(`${prefix}.${version}.${m[1]}`, fields);
  }
}

// --- conversion -------------------------------------------------------------------------------------

/** Types whose OpenAPI schema their Go type defines by hand (see the header). */
const CUSTOM = {
  "io.k8s.apimachinery.pkg.apis.meta.v1.Time": { type: "string", format: "date-time" },
  "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": { type: "string", format: "date-time" },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
    format: "int-or-string",
    oneOf: [{ type: "integer" }, { type: "string" }],
  },
  "io.k8s.apimachinery.pkg.api.resource.Quantity": { oneOf: [{ type: "string" }, { type: "number" }] },
};
const RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension";
const UNTYPED = new Set(["__untyped_atomic_", "__untyped_deduced_"]);

function isDeducedObject(elementType) {
  return (
    elementType?.namedType === "__untyped_deduced_" ||
    (elementType?.scalar === "untyped" && elementType.map?.elementType?.namedType === "__untyped_deduced_")
  );
}

/** The Go type of a scalar leaf without pointers, slices and maps: `*int32` → int32, `map[string][]byte` → []byte. */
function leafGoType(goType) {
  let t = goType ?? "";
  for (;;) {
    if (t.startsWith("*")) t = t.slice(1);
    else if (t.startsWith("map[")) t = t.slice(t.indexOf("]") + 1);
    else if (t.startsWith("[]") && t !== "[]byte") t = t.slice(2);
    else return t;
  }
}

function scalar(kind, goType, where) {
  const leaf = leafGoType(goType);
  switch (kind) {
    case "boolean":
      return { type: "boolean" };
    case "string":
      return leaf === "[]byte" ? { type: "string", format: "byte" } : { type: "string" };
    case "numeric":
      if (leaf === "int32" || leaf === "int64") return { type: "integer", format: leaf };
      if (leaf === "float64") return { type: "number", format: "double" };
      throw new Error(`${where}: numeric field of Go type ${goType}`);
    default:
      throw new Error(`${where}: scalar ${kind}`);
  }
}

const RELATION = { atomic: "atomic", separable: "granular" };

/** An SMD type reference (a field's type, an element type) as an OpenAPI schema. */
function ref(typeRef, goType, where) {
  if (typeRef.namedType !== undefined) {
    let name = typeRef.namedType;
    // The merge schema stands runtime.RawExtension in as its untyped atomic type (schemaconv
    // hard-codes it so); the OpenAPI field refers to RawExtension's own definition.
    if (name === "__untyped_atomic_" && leafGoType(goType) === "runtime.RawExtension") name = RAW_EXTENSION;
    if (UNTYPED.has(name)) throw new Error(`${where}: ${name} for Go type ${goType}`);
    const out = { $ref: name };
    if (typeRef.elementRelationship) out["x-kubernetes-map-type"] = RELATION[typeRef.elementRelationship];
    return out;
  }
  if (typeRef.elementRelationship) throw new Error(`${where}: relationship on an inline type`);
  return atom(typeRef, goType, where);
}

function atom(a, goType, where) {
  if (a.scalar !== undefined) {
    if (a.list || a.map) throw new Error(`${where}: mixed atom`);
    return scalar(a.scalar, goType, where);
  }
  if (a.list) {
    const l = a.list;
    const out = { type: "array", items: ref(l.elementType, goType, `${where}[]`) };
    if (l.elementRelationship === "atomic") out["x-kubernetes-list-type"] = "atomic";
    else if (l.elementRelationship === "associative" && l.keys?.length) {
      out["x-kubernetes-list-type"] = "map";
      out["x-kubernetes-list-map-keys"] = l.keys;
    } else if (l.elementRelationship === "associative") out["x-kubernetes-list-type"] = "set";
    else throw new Error(`${where}: list without relationship`);
    return out;
  }
  if (a.map) return object(a.map, undefined, where, goType);
  throw new Error(`${where}: empty atom`);
}

/** An SMD map: a struct (its fields' Go types in fieldsOf) or a map (its Go type in goType). */
function object(m, fieldsOf, where, goType) {
  const out = { type: "object" };
  if (m.fields?.length) {
    if (m.elementType && Object.keys(m.elementType).length)
      throw new Error(`${where}: fields and elementType`);
    out.properties = {};
    for (const f of m.fields) {
      const p = ref(f.type, fieldsOf?.get(f.name), `${where}.${f.name}`);
      if (f.default !== undefined) p.default = f.default;
      out.properties[f.name] = p;
    }
  } else if (m.elementType && !isDeducedObject(m.elementType)) {
    out.additionalProperties = ref(m.elementType, goType, `${where}.*`);
  }
  if (m.elementRelationship) out["x-kubernetes-map-type"] = RELATION[m.elementRelationship];
  return out;
}

const definitions = {};
for (const t of smd.types) {
  if (UNTYPED.has(t.name)) continue;
  if (CUSTOM[t.name]) {
    definitions[t.name] = CUSTOM[t.name];
    continue;
  }
  if (t.scalar !== undefined || !t.map) throw new Error(`${t.name}: unexpected top-level ${Object.keys(t)}`);
  definitions[t.name] = object(t.map, goFields.get(t.name), t.name);
}

// --- kinds ------------------------------------------------------------------------------------------

/** The API group of each k8s.io/api package (register.go GroupName). */
const GROUPS = {
  admissionregistration: "admissionregistration.k8s.io",
  apiserverinternal: "internal.apiserver.k8s.io",
  apps: "apps",
  autoscaling: "autoscaling",
  batch: "batch",
  certificates: "certificates.k8s.io",
  coordination: "coordination.k8s.io",
  core: "",
  discovery: "discovery.k8s.io",
  events: "events.k8s.io",
  extensions: "extensions",
  flowcontrol: "flowcontrol.apiserver.k8s.io",
  imagepolicy: "imagepolicy.k8s.io",
  lifecycle: "lifecycle.k8s.io",
  networking: "networking.k8s.io",
  node: "node.k8s.io",
  policy: "policy",
  rbac: "rbac.authorization.k8s.io",
  resource: "resource.k8s.io",
  scheduling: "scheduling.k8s.io",
  storage: "storage.k8s.io",
  storagemigration: "storagemigration.k8s.io",
};

/** apiVersion → kind → definition: every definition with apiVersion, kind and an ObjectMeta. */
const kinds = {};
for (const [name, d] of Object.entries(definitions)) {
  const p = d.properties;
  if (!p?.apiVersion || !p.kind || p.metadata?.$ref !== "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    continue;
  const m = /^io\.k8s\.api\.(\w+)\.(v\w+)\.(\w+)$/.exec(name);
  if (!m) throw new Error(`${name}: a kind outside k8s.io/api`);
  const group = GROUPS[m[1]];
  if (group === undefined) throw new Error(`${name}: no group for package ${m[1]}`);
  const apiVersion = group === "" ? m[2] : `${group}/${m[2]}`;
  kinds[apiVersion] ??= {};
  kinds[apiVersion][m[3]] = name;
}

const out = {
  source: `k8s.io/client-go ${tag} (Kubernetes ${kubernetesVersion}): applyconfigurations/internal/internal.go and applyconfigurations/*/*`,
  release,
  kinds,
  definitions,
};
const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, "..", "src", "kube", "schemas", "data", `kubernetes-${release}.json`);
mkdirSync(dirname(target), { recursive: true });
const text = `${JSON.stringify(out)}\n`;
writeFileSync(target, text);
console.log(
  `${target}: ${Object.keys(definitions).length} definitions, ${Object.values(kinds).reduce((n, k) => n + Object.keys(k).length, 0)} kinds, ${text.length} bytes`,
);
