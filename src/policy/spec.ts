/**
 * The parts of a policy's spec both kinds share: paramKind, matchConstraints, matchConditions,
 * variables and failurePolicy (with its default), and the reading of an object's spec itself.
 */
import { dns1035Label, dns1123Subdomain, isCelIdentifier, qualifiedName } from "./fields.ts";
import type { YamlMap, YamlReader } from "../yaml/reader.ts";
import { boundedSeq, enumValue, missing, reportFormat, requiredString, UniqueNames } from "./read.ts";
import type {
  FailurePolicy,
  MatchCondition,
  MatchResources,
  ParamKind,
  SourceMap,
  Variable,
} from "./types.ts";
import { readMatchResources } from "./match.ts";

const FAILURE_POLICIES = ["Fail", "Ignore"] as const satisfies readonly FailurePolicy[];
const MAX_MATCH_CONDITIONS = 64;
const PARAM_KIND_FIELDS = ["apiVersion", "kind"];
const NAMED_EXPRESSION_FIELDS = ["name", "expression"];

export interface ObjectInput {
  readonly r: YamlReader;
  readonly top: YamlMap;
  readonly apiVersion: string;
  readonly source: SourceMap;
}

export function requireSpec(top: YamlMap): YamlMap | undefined {
  const spec = top.map("spec");
  if (!spec && !top.field("spec")) missing(top, "spec");
  return spec;
}

function readParamKind(r: YamlReader, view: YamlMap): ParamKind | undefined {
  view.known(PARAM_KIND_FIELDS);
  const before = r.errors;
  const apiVersion = requiredString(view, "apiVersion");
  const avField = view.field("apiVersion");
  if (apiVersion !== undefined && avField) {
    const parts = apiVersion.split("/");
    if (parts.length > 2) {
      r.report(
        "PE_FIELD_VALUE",
        avField.path,
        avField.offset,
        `must be "group/version" or "version"; got ${JSON.stringify(apiVersion)}`,
      );
    } else {
      const group = parts.length === 2 ? (parts[0] ?? "") : "";
      const version = parts.length === 2 ? (parts[1] ?? "") : (parts[0] ?? "");
      if (group !== "") {
        for (const e of dns1123Subdomain(group)) {
          r.report(
            "PE_FIELD_VALUE",
            avField.path,
            avField.offset,
            `group ${e}; got ${JSON.stringify(group)}`,
          );
        }
      }
      if (version === "") {
        r.report(
          "PE_FIELD_VALUE",
          avField.path,
          avField.offset,
          `version must be specified; got ${JSON.stringify(apiVersion)}`,
        );
      } else {
        for (const e of dns1035Label(version)) {
          r.report(
            "PE_FIELD_VALUE",
            avField.path,
            avField.offset,
            `version ${e}; got ${JSON.stringify(version)}`,
          );
        }
      }
    }
  }
  const kind = requiredString(view, "kind");
  const kindField = view.field("kind");
  if (kind !== undefined && kindField) {
    for (const e of dns1035Label(kind.toLowerCase())) {
      r.report(
        "PE_FIELD_VALUE",
        kindField.path,
        kindField.offset,
        `may have mixed case, but otherwise ${e}; got ${JSON.stringify(kind)}`,
      );
    }
  }
  if (r.errors > before || apiVersion === undefined || kind === undefined) return undefined;
  return { apiVersion, kind };
}

/**
 * matchConditions and variables: `{name, expression}` items with unique names, each name checked by
 * `nameProblems` (the messages, empty when the name is good).
 */
function readNamedExpressions(
  r: YamlReader,
  spec: YamlMap,
  key: "matchConditions" | "variables",
  max: number | undefined,
  what: string,
  nameProblems: (name: string) => readonly string[],
): { name: string; expression: string }[] {
  const out: { name: string; expression: string }[] = [];
  const names = new UniqueNames(r, what);
  for (const item of boundedSeq(r, spec, key, max)) {
    const view = r.mapping(item);
    if (!view) continue;
    view.known(NAMED_EXPRESSION_FIELDS);
    const name = requiredString(view, "name");
    const nameField = view.field("name");
    let nameOk = name !== undefined;
    if (name !== undefined && nameField) {
      nameOk = reportFormat(r, nameField, name, nameProblems(name));
      if (!names.first(nameField, name)) nameOk = false;
    }
    const expression = requiredString(view, "expression");
    if (nameOk && name !== undefined && expression !== undefined) out.push({ name, expression });
  }
  return out;
}

function readMatchConditions(r: YamlReader, spec: YamlMap): MatchCondition[] {
  return readNamedExpressions(
    r,
    spec,
    "matchConditions",
    MAX_MATCH_CONDITIONS,
    "match condition name",
    qualifiedName,
  );
}

function readVariables(r: YamlReader, spec: YamlMap): Variable[] {
  return readNamedExpressions(r, spec, "variables", undefined, "variable name", (name) =>
    isCelIdentifier(name)
      ? []
      : [
          "must be a CEL identifier (letters, digits and '_', not starting with a digit, not a reserved word)",
        ],
  );
}

interface CommonSpec {
  readonly paramKind?: ParamKind;
  readonly matchConstraints?: MatchResources;
  readonly matchConditions: readonly MatchCondition[];
  readonly variables: readonly Variable[];
  readonly failurePolicy: FailurePolicy;
}

export function readCommonSpec(r: YamlReader, spec: YamlMap, mutating: boolean): CommonSpec {
  const pk = spec.map("paramKind");
  const paramKind = pk ? readParamKind(r, pk) : undefined;
  const mc = spec.map("matchConstraints");
  if (!mc && !spec.field("matchConstraints")) {
    missing(
      spec,
      "matchConstraints",
      'missing required field "matchConstraints": a policy must say which resources it applies to',
    );
  }
  const matchConstraints = mc
    ? readMatchResources(r, mc, { requireResourceRules: true, mutating })
    : undefined;
  const matchConditions = readMatchConditions(r, spec);
  const variables = readVariables(r, spec);
  const failurePolicy = enumValue(spec, "failurePolicy", FAILURE_POLICIES, "Fail") ?? "Fail";
  return {
    ...(paramKind ? { paramKind } : {}),
    ...(matchConstraints ? { matchConstraints } : {}),
    matchConditions,
    variables,
    failurePolicy,
  };
}
