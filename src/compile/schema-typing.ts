/**
 * Typed checking against the built-in kinds' schemas, beyond what the API server refuses: when a
 * policy's matchConstraints name exactly one built-in kind, `object` and `oldObject` get that kind's
 * type (src/kube/schemas, as Kubernetes' SchemaDeclType builds it), and an expression that
 * type-checks as dyn but not against the schema is reported as a warning, as the API server's
 * `status.typeChecking` reports it (admission/plugin/policy/validating/typechecking.go); never an
 * error, since the API server accepts such a policy.
 *
 * Two departures from typechecking.go, so that celgate warns only where the expression is wrong:
 * `object.metadata.namespace` finds the field Kubernetes declares as `__namespace__` (its checker
 * does not recognize keywords as field names, so it warns), and a field whose schema has no CEL type
 * (a Quantity: `resources.limits`) is dyn rather than undeclared.
 *
 * Compile-time only, and only when asked (`check`): the request path never sees it.
 */
import {
  admissionCheckEnv,
  type CelExtras,
  type CelType,
  type CheckEnv,
  type MessageType,
} from "../cel/index.ts";
import { builtinKinds, kindCelType, kindSchema } from "../kube/schemas/index.ts";
import { resourceForKind } from "../kube/kinds.ts";
import type { ParsedPolicy } from "../policy/types.ts";

/** The schema type of a policy's `object`: its kind's name, type and message types. */
export interface ObjectSchemaType {
  readonly kind: string;
  readonly type: CelType;
  readonly messages: readonly MessageType[];
}

/** The built-in apiVersion/kind a rule's single group, version and resource name, if any. */
function ruleKind(group: string, version: string, resource: string): { apiVersion: string; kind: string }[] {
  const apiVersion = group === "" ? version : `${group}/${version}`;
  return builtinKinds().filter((k) => k.apiVersion === apiVersion && resourceForKind(k.kind) === resource);
}

/**
 * The type of `object` for a policy whose resourceRules name one built-in kind (each rule one group,
 * one version and one resource, no wildcard or subresource); undefined otherwise (it stays dyn).
 */
export function objectSchemaType(policy: ParsedPolicy): ObjectSchemaType | undefined {
  const rules = policy.matchConstraints?.resourceRules ?? [];
  if (rules.length === 0) return undefined;
  const found = new Set<string>();
  for (const r of rules) {
    const [g, v, res] = [r.apiGroups, r.apiVersions, r.resources];
    if (g.length !== 1 || v.length !== 1 || res.length !== 1) return undefined;
    const [group, version, resource] = [g[0] as string, v[0] as string, res[0] as string];
    if ([group, version, resource].some((x) => x.includes("*")) || resource.includes("/")) return undefined;
    const kinds = ruleKind(group, version, resource);
    if (kinds.length !== 1) return undefined;
    found.add(`${kinds[0]?.apiVersion} ${kinds[0]?.kind}`);
  }
  if (found.size !== 1) return undefined;
  const [apiVersion, kind] = ([...found][0] as string).split(" ") as [string, string];
  const schema = kindSchema(apiVersion, kind);
  const typed =
    schema && kindCelType(schema, kind, { recognizeKeywordAsFieldName: true, untypedAsDyn: true });
  return typed && { kind, type: typed.type, messages: typed.messages };
}

/** The checker environment of an expression with `object` and `oldObject` typed from the schema. */
export function schemaCheckEnv(
  schema: ObjectSchemaType,
  options: {
    readonly params: CelType | null;
    readonly variables: Iterable<readonly [string, CelType | undefined]>;
    readonly mutation: boolean;
    readonly extras: CelExtras;
    readonly kubernetesVersion: string | undefined;
    /** false for a messageExpression, which the API server compiles without `authorizer`. */
    readonly authorizer: boolean;
  },
): CheckEnv {
  return admissionCheckEnv({
    authorizer: options.authorizer,
    object: schema.type,
    oldObject: schema.type,
    schemaMessages: schema.messages,
    params: options.params,
    variables: options.variables,
    mutation: options.mutation,
    extras: options.extras,
    ...(options.kubernetesVersion === undefined ? {} : { kubernetesVersion: options.kubernetesVersion }),
  });
}
