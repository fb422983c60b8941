/**
 * Structural schemas of the kinds policies see, for typing CEL expressions and for merging
 * ApplyConfigurations as server-side apply does.
 *
 *   const k = kindSchema("apps/v1", "Deployment", crds);     // built-in first, then custom resources
 *   const t = k && kindCelType(k, "Deployment");             // { type, messages } for the checker
 *   admissionCheckEnv({ object: t.type, oldObject: t.type, schemaMessages: t.messages });
 *   const m = k && kindMergeSchema(k);                       // merge metadata
 *   mergeStrategy(mergeNodeAt(m, ["spec", "selector"])!);    // "atomic-struct"
 *
 * The built-in data is loaded on first use (builtin.ts). Nothing here runs on the request path.
 */
import { builtinKindSchema } from "./builtin.ts";
import type { KindSchema } from "./schema.ts";

export {
  BUILTIN_SCHEMAS_RELEASE,
  builtinDefinition,
  builtinKindSchema,
  builtinKinds,
  builtinSchemasLoaded,
  builtinSchemasSource,
} from "./builtin.ts";
export type { DeclType, KindCelType, TypeProviderOptions } from "./cel-types.ts";
export { assignTypeNames, celTypeOf, kindCelType, messageTypesOf, schemaDeclType } from "./cel-types.ts";
export type { CrdSchemas, FieldLocator } from "./crd.ts";
export { isCustomResourceDefinition, readCustomResourceDefinition } from "./crd.ts";
export { CEL_RESERVED_SYMBOLS, escapeFieldName, unescapeFieldName } from "./escaping.ts";
export type {
  ListNode,
  MapNode,
  MergeNode,
  MergeStrategy,
  ScalarKind,
  ScalarNode,
  UntypedNode,
} from "./merge.ts";
export { deducedMergeSchema, kindMergeSchema, mergeNodeAt, mergeStrategy } from "./merge.ts";
export type { DefinitionLookup, KindSchema, Schema } from "./schema.ts";
export { refOf } from "./schema.ts";
export type { StructuralIssue } from "./structural.ts";
export { structuralIssues } from "./structural.ts";

/**
 * The schema of a kind: a built-in one when the API has it (Kubernetes' resolver asks the built-in
 * definitions first), else the first custom resource schema for that apiVersion and kind.
 */
export function kindSchema(
  apiVersion: string,
  kind: string,
  customResources: readonly KindSchema[] = [],
): KindSchema | undefined {
  return (
    builtinKindSchema(apiVersion, kind) ??
    customResources.find((k) => k.apiVersion === apiVersion && k.kind === kind)
  );
}
