/**
 * Custom resources' schemas, read from CustomResourceDefinition objects (apiextensions.k8s.io/v1):
 * one kind schema per served version with a structural openAPIV3Schema.
 *
 * The schema is taken as the API server publishes it in /openapi/v3, which Kubernetes' admission
 * type checking reads for custom resources (resolver.ClientDiscoveryResolver):
 * apiextensions-apiserver pkg/controller/openapi/builder/builder.go sets `metadata` to the full
 * ObjectMeta and adds `apiVersion` and `kind` (addTypeMetaProperties) at the root. A schema that is
 * not structural (structural.ts) is reported, file:line:col of the fault when the CRD came from a
 * file, and the version's objects stay untyped, as the API server would have refused the CRD.
 */
import type { Diagnostic, SourceLocation } from "../../errors.ts";
import { builtinDefinition } from "./builtin.ts";
import { childPath } from "./paths.ts";
import type { KindSchema, Schema } from "./schema.ts";
import { structuralIssues } from "./structural.ts";

/** Where a field of the CRD's document was written (src/policy's SourceMap fits). */
export interface FieldLocator {
  locate(path: string): SourceLocation;
}

export interface CrdSchemas {
  /** The group/version, kind and schema of each served version with a structural schema. */
  readonly kinds: readonly KindSchema[];
  readonly diagnostics: readonly Diagnostic[];
}

const CRD_API_VERSION = "apiextensions.k8s.io/v1";
const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

type Json = Readonly<Record<string, unknown>>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function isCustomResourceDefinition(object: unknown): boolean {
  return isObject(object) &&
    object.kind === "CustomResourceDefinition" &&
    typeof object.apiVersion === "string"
    ? object.apiVersion.startsWith("apiextensions.k8s.io/")
    : false;
}

/** builder.go: the published root has apiVersion, kind and the whole ObjectMeta. */
function published(root: Schema): Schema {
  return {
    ...root,
    properties: {
      ...(root.properties ?? {}),
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { $ref: OBJECT_META },
    },
  };
}

/**
 * The schemas of a CustomResourceDefinition's served versions. Never throws: a malformed CRD gives
 * diagnostics and no kinds.
 */
export function readCustomResourceDefinition(object: unknown, locator?: FieldLocator): CrdSchemas {
  const diagnostics: Diagnostic[] = [];
  const name = isObject(object) && isObject(object.metadata) ? String(object.metadata.name ?? "") : "";
  const report = (code: Diagnostic["code"], path: string, message: string): void => {
    diagnostics.push({
      code,
      severity: "error",
      message,
      path,
      ...(locator ? { location: locator.locate(path) } : {}),
      object: { kind: "CustomResourceDefinition", name },
    });
  };
  if (!isObject(object) || object.apiVersion !== CRD_API_VERSION) {
    report(
      "PE_UNKNOWN_KIND",
      "apiVersion",
      `a CustomResourceDefinition is read from ${CRD_API_VERSION} only`,
    );
    return { kinds: [], diagnostics };
  }
  const spec = isObject(object.spec) ? object.spec : {};
  const group = spec.group;
  const kind = isObject(spec.names) ? spec.names.kind : undefined;
  const plural = isObject(spec.names) ? spec.names.plural : undefined;
  if (typeof group !== "string" || group === "")
    report("PE_MISSING_FIELD", "spec.group", "spec.group must name the API group");
  if (typeof kind !== "string" || kind === "")
    report("PE_MISSING_FIELD", "spec.names.kind", "spec.names.kind must name the kind");
  if (!Array.isArray(spec.versions))
    report("PE_MISSING_FIELD", "spec.versions", "spec.versions must list the versions");
  if (
    typeof group !== "string" ||
    typeof kind !== "string" ||
    !Array.isArray(spec.versions) ||
    diagnostics.length > 0
  )
    return { kinds: [], diagnostics };
  const kinds: KindSchema[] = [];
  spec.versions.forEach((v: unknown, i: number) => {
    const at = childPath("spec.versions", i);
    if (!isObject(v) || typeof v.name !== "string") {
      report("PE_MISSING_FIELD", childPath(at, "name"), "each version needs a name");
      return;
    }
    if (v.served !== true) return;
    const schemaPath = childPath(childPath(at, "schema"), "openAPIV3Schema");
    const root = isObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (!isObject(root)) {
      report("PE_MISSING_FIELD", schemaPath, `version ${v.name} has no schema.openAPIV3Schema`);
      return;
    }
    const issues = structuralIssues(root as Schema);
    for (const issue of issues) {
      const path =
        issue.path === "" ? schemaPath : `${schemaPath}${issue.path.startsWith("[") ? "" : "."}${issue.path}`;
      report(
        "PE_CRD_SCHEMA",
        path,
        `${issue.message} (the schema of ${kind} ${group}/${v.name} is not structural)`,
      );
    }
    if (issues.length > 0) return;
    kinds.push({
      apiVersion: `${group}/${v.name}`,
      kind,
      schema: published(root as Schema),
      definition: builtinDefinition,
      origin: "crd",
      ...(typeof plural === "string" && plural !== "" ? { resource: plural } : {}),
    });
  });
  return { kinds, diagnostics };
}
