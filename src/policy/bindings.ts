/**
 * The two binding kinds: policyName, paramRef, matchResources and, for validating bindings,
 * validationActions.
 */
import { isSeq } from "yaml";
import { dns1123Subdomain, pathSegmentName } from "./fields.ts";
import type { YamlMap, YamlReader } from "../yaml/reader.ts";
import { enumValue, missing, oneOf, reportFormat, requiredString, stringList } from "./read.ts";
import type {
  MatchResources,
  MutatingBinding,
  ParameterNotFoundAction,
  ParamRef,
  SourceMap,
  ValidationAction,
  ValidatingBinding,
} from "./types.ts";
import { readMetadata, TOP_FIELDS } from "./metadata.ts";
import { readMatchResources, readSelector } from "./match.ts";
import { type ObjectInput, requireSpec } from "./spec.ts";

const VALIDATION_ACTIONS = ["Deny", "Warn", "Audit"] as const satisfies readonly ValidationAction[];
const NOT_FOUND_ACTIONS = ["Allow", "Deny"] as const satisfies readonly ParameterNotFoundAction[];

const VALIDATING_BINDING_SPEC_FIELDS = ["policyName", "paramRef", "matchResources", "validationActions"];
const MUTATING_BINDING_SPEC_FIELDS = ["policyName", "paramRef", "matchResources"];
const PARAM_REF_FIELDS = ["name", "namespace", "selector", "parameterNotFoundAction"];

/**
 * A paramRef. Its parameterNotFoundAction is required (pkg/apis/admissionregistration/validation/
 * validation.go, validateParamRef); only v1alpha1 defaults it to Deny (v1alpha1/defaults.go,
 * SetDefaults_ParamRef), so an object read as v1beta1 or v1 without it is refused.
 */
function readParamRef(r: YamlReader, view: YamlMap, apiVersion: string): ParamRef | undefined {
  view.known(PARAM_REF_FIELDS);
  const before = r.errors;
  const name = view.string("name");
  const nameField = view.field("name");
  const namespace = view.string("namespace");
  const sel = view.map("selector");
  const selector = sel ? readSelector(r, sel) : undefined;
  const hasName = name !== undefined && name !== "";
  if (hasName && nameField) {
    reportFormat(r, nameField, name, pathSegmentName(name));
    if (sel)
      r.report(
        "PE_FIELD_VALUE",
        nameField.path,
        nameField.offset,
        "name and selector are mutually exclusive",
      );
  }
  if (!hasName && !sel && r.errors === before) {
    r.report("PE_MISSING_FIELD", view.path, view.offset, "one of name or selector must be specified");
  }
  const defaulted = apiVersion.endsWith("/v1alpha1");
  if (!defaulted && !view.field("parameterNotFoundAction"))
    missing(
      view,
      "parameterNotFoundAction",
      'missing required field "parameterNotFoundAction": "Deny" or "Allow"',
    );
  const parameterNotFoundAction = enumValue(view, "parameterNotFoundAction", NOT_FOUND_ACTIONS, "Deny");
  if (r.errors > before || parameterNotFoundAction === undefined) return undefined;
  return {
    ...(hasName ? { name } : {}),
    ...(namespace !== undefined && namespace !== "" ? { namespace } : {}),
    ...(selector ? { selector } : {}),
    parameterNotFoundAction,
  };
}

interface CommonBinding {
  readonly name: string | undefined;
  readonly policyName: string | undefined;
  readonly paramRef?: ParamRef;
  readonly matchResources?: MatchResources;
  readonly spec: YamlMap | undefined;
}

function readCommonBinding(
  { r, top, apiVersion }: ObjectInput,
  specFields: readonly string[],
  mutating: boolean,
): CommonBinding {
  top.known(TOP_FIELDS);
  const meta = readMetadata(r, top, true);
  const spec = requireSpec(top);
  if (!spec) return { name: meta.name, policyName: undefined, spec };
  spec.known(specFields);
  let policyName = requiredString(spec, "policyName");
  const pnField = spec.field("policyName");
  if (
    policyName !== undefined &&
    pnField &&
    !reportFormat(r, pnField, policyName, dns1123Subdomain(policyName))
  ) {
    policyName = undefined;
  }
  const pr = spec.map("paramRef");
  const paramRef = pr ? readParamRef(r, pr, apiVersion) : undefined;
  const mr = spec.map("matchResources");
  const matchResources = mr
    ? readMatchResources(r, mr, { requireResourceRules: false, mutating })
    : undefined;
  return {
    name: meta.name,
    policyName,
    spec,
    ...(paramRef ? { paramRef } : {}),
    ...(matchResources ? { matchResources } : {}),
  };
}

function readValidationActions(r: YamlReader, spec: YamlMap): ValidationAction[] {
  const list = stringList(spec, "validationActions");
  const out: ValidationAction[] = [];
  if (!list) {
    if (!spec.field("validationActions")) {
      missing(
        spec,
        "validationActions",
        'missing required field "validationActions": at least one of "Deny", "Warn", "Audit" is required',
      );
    }
    return out;
  }
  const seen = new Set<string>();
  for (const item of list.items) {
    const action = oneOf(r, item.field, item.value, VALIDATION_ACTIONS);
    if (seen.has(item.value)) {
      r.report(
        "PE_DUPLICATE",
        item.field.path,
        item.field.offset,
        `duplicate validation action ${JSON.stringify(item.value)}`,
      );
    } else if (action !== undefined) {
      out.push(action);
    }
    seen.add(item.value);
  }
  if (seen.has("Deny") && seen.has("Warn")) {
    r.report(
      "PE_FIELD_VALUE",
      list.field.path,
      list.field.offset,
      'must not contain both "Deny" and "Warn" (the same failure would be reported twice)',
    );
  }
  if (isSeq(list.field.node) && list.field.node.items.length === 0) {
    r.report("PE_FIELD_VALUE", list.field.path, list.field.offset, "must contain at least one item");
  }
  return out;
}

/** What both binding kinds hold besides their kind; undefined when the object has errors. */
function bindingFields(
  r: YamlReader,
  common: CommonBinding,
  apiVersion: string,
  source: SourceMap,
): Omit<MutatingBinding, "kind"> | undefined {
  if (r.errors > 0 || common.name === undefined || common.policyName === undefined) return undefined;
  return {
    name: common.name,
    apiVersion,
    source,
    policyName: common.policyName,
    ...(common.paramRef ? { paramRef: common.paramRef } : {}),
    ...(common.matchResources ? { matchResources: common.matchResources } : {}),
  };
}

export function readValidatingBinding({
  r,
  top,
  apiVersion,
  source,
}: ObjectInput): ValidatingBinding | undefined {
  const common = readCommonBinding({ r, top, apiVersion, source }, VALIDATING_BINDING_SPEC_FIELDS, false);
  const validationActions = common.spec ? readValidationActions(r, common.spec) : [];
  const fields = bindingFields(r, common, apiVersion, source);
  return fields && { kind: "ValidatingAdmissionPolicyBinding", ...fields, validationActions };
}

export function readMutatingBinding({
  r,
  top,
  apiVersion,
  source,
}: ObjectInput): MutatingBinding | undefined {
  const common = readCommonBinding({ r, top, apiVersion, source }, MUTATING_BINDING_SPEC_FIELDS, true);
  const fields = bindingFields(r, common, apiVersion, source);
  return fields && { kind: "MutatingAdmissionPolicyBinding", ...fields };
}
