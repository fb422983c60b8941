/**
 * MutatingAdmissionPolicy: its mutations (ApplyConfiguration or JSONPatch) and reinvocationPolicy
 * on top of the shared spec.
 */
import type { Field, YamlReader } from "../yaml/reader.ts";
import { enumValue, missing, oneOf, requiredString } from "./read.ts";
import type { MutatingPolicy, Mutation, PatchType, ReinvocationPolicy } from "./types.ts";
import { readMetadata, TOP_FIELDS } from "./metadata.ts";
import { type ObjectInput, readCommonSpec, requireSpec } from "./spec.ts";

const PATCH_TYPES = ["ApplyConfiguration", "JSONPatch"] as const satisfies readonly PatchType[];
const REINVOCATION_POLICIES = ["Never", "IfNeeded"] as const satisfies readonly ReinvocationPolicy[];

const MUTATING_SPEC_FIELDS = [
  "paramKind",
  "matchConstraints",
  "variables",
  "mutations",
  "failurePolicy",
  "reinvocationPolicy",
  "matchConditions",
];
const MUTATION_FIELDS = ["patchType", "applyConfiguration", "jsonPatch"];
const EXPRESSION_FIELDS = ["expression"];

function readMutation(r: YamlReader, item: Field): Mutation | undefined {
  const view = r.mapping(item);
  if (!view) return undefined;
  view.known(MUTATION_FIELDS);
  const before = r.errors;
  const ptField = view.field("patchType");
  let patchType: PatchType | undefined;
  if (!ptField) missing(view, "patchType");
  else {
    const s = r.string(ptField);
    if (s !== undefined) patchType = oneOf(r, ptField, s, PATCH_TYPES);
  }
  const readExpression = (key: "applyConfiguration" | "jsonPatch"): string | undefined => {
    const m = view.map(key);
    if (!m) return undefined;
    m.known(EXPRESSION_FIELDS);
    return requiredString(m, "expression");
  };
  const given = { applyConfiguration: view.field("applyConfiguration"), jsonPatch: view.field("jsonPatch") };
  let expression: string | undefined;
  if (patchType !== undefined) {
    const own = patchType === "ApplyConfiguration" ? "applyConfiguration" : "jsonPatch";
    const other = own === "applyConfiguration" ? "jsonPatch" : "applyConfiguration";
    if (!given[own])
      missing(
        view,
        own,
        `missing required field "${own}": it must be specified when patchType is "${patchType}"`,
      );
    else expression = readExpression(own);
    const otherField = given[other];
    if (otherField) {
      r.report(
        "PE_FIELD_VALUE",
        otherField.path,
        otherField.offset,
        `must not be specified when patchType is "${patchType}"`,
      );
    }
  }
  if (r.errors > before || patchType === undefined || expression === undefined) return undefined;
  return patchType === "ApplyConfiguration"
    ? { patchType, applyConfiguration: { expression } }
    : { patchType, jsonPatch: { expression } };
}

export function readMutatingPolicy({ r, top, apiVersion, source }: ObjectInput): MutatingPolicy | undefined {
  top.known(TOP_FIELDS);
  const meta = readMetadata(r, top, true);
  const spec = requireSpec(top);
  if (!spec) return undefined;
  spec.known(MUTATING_SPEC_FIELDS);
  const common = readCommonSpec(r, spec, true);
  const mutations: Mutation[] = [];
  const mf = spec.field("mutations");
  const items = mf ? r.list(mf) : undefined;
  if (!mf)
    missing(spec, "mutations", 'missing required field "mutations": it must contain at least one item');
  else if (items && items.length === 0)
    r.report("PE_FIELD_VALUE", mf.path, mf.offset, "must contain at least one item");
  for (const item of items ?? []) {
    const m = readMutation(r, item);
    if (m) mutations.push(m);
  }
  // Required in every version, no default (validation.go, validateMutatingAdmissionPolicySpec).
  if (!spec.field("reinvocationPolicy"))
    missing(spec, "reinvocationPolicy", 'missing required field "reinvocationPolicy": "Never" or "IfNeeded"');
  const reinvocationPolicy = enumValue(spec, "reinvocationPolicy", REINVOCATION_POLICIES, "Never") ?? "Never";
  return {
    kind: "MutatingAdmissionPolicy",
    name: meta.name ?? "",
    apiVersion,
    source,
    ...common,
    annotations: meta.annotations,
    mutations,
    reinvocationPolicy,
  };
}
