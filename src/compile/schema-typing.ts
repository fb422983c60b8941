/**
 * Typed checking against schemas, beyond what the API server refuses: when a policy's
 * matchConstraints name exactly one kind celgate has a schema for (a built-in kind, or a custom
 * resource whose CustomResourceDefinition was loaded), `object` and `oldObject` get that kind's type,
 * and `params` gets its paramKind's type when that kind has a schema (src/kube/schemas, as
 * Kubernetes' SchemaDeclType builds them). An expression that type-checks as dyn but not against the
 * schema is reported as a warning, as the API server's `status.typeChecking` reports it
 * (admission/plugin/policy/validating/typechecking.go, which types ten built-in kinds and never
 * custom resources or params); never an error, since the API server accepts such a policy.
 *
 * Three departures from typechecking.go, so that celgate warns only where the expression is wrong:
 * `object.metadata.namespace` finds the field Kubernetes declares as `__namespace__` (its checker
 * does not recognize keywords as field names, so it warns); a field whose schema has no CEL type
 * (a Quantity: `resources.limits`) is dyn rather than undeclared; and in a MutatingAdmissionPolicy,
 * which the API server never type-checks, a call that fails only on two path-named object types is
 * no warning (schemaTypeClash).
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
import type { Diagnostic } from "../errors.ts";
import { resourceForKind } from "../kube/kinds.ts";
import {
  builtinKinds,
  isCustomResourceDefinition,
  type KindSchema,
  kindCelType,
  kindSchema,
  readCustomResourceDefinition,
} from "../kube/schemas/index.ts";
import { CEL_RESERVED, closestName } from "../policy/fields.ts";
import type { ParsedPolicy, ResourceObject } from "../policy/types.ts";

/** A kind's type as a schema gives it: the kind's name and its CEL type. */
export interface SchemaTypedKind {
  readonly kind: string;
  readonly type: CelType;
}

/** The schema types of a policy's `object` and `params`, and the message types they need. */
export interface PolicySchemaTypes {
  readonly object: SchemaTypedKind | undefined;
  readonly params: SchemaTypedKind | undefined;
  readonly messages: readonly MessageType[];
  /** Each message type's field names, for the did-you-mean on an undefined field. */
  readonly fieldNames: ReadonlyMap<string, readonly string[]>;
  /** The fields looked up and not found since the last `clearMisses`, as [type name, field]. */
  readonly misses: [string, string][];
}

/** The custom resources' schemas the CRDs among `objects` define, and their structural faults. */
export interface CustomResourceSchemas {
  readonly kinds: readonly KindSchema[];
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * The served versions' schemas of every CustomResourceDefinition among `objects` (the policy files'
 * own objects and those given with `--crd`). A CRD read twice (the same file given twice) counts
 * once; a version whose schema is not structural is reported (PE_CRD_SCHEMA) and left out, as the
 * API server would have refused the CRD.
 */
export function customResourceSchemas(objects: readonly ResourceObject[]): CustomResourceSchemas {
  const kinds: KindSchema[] = [];
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const r of objects) {
    if (!isCustomResourceDefinition(r.object)) continue;
    const key = `${r.source.locate("metadata.name").file}\u0000${r.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const read = readCustomResourceDefinition(r.object, r.source);
    kinds.push(...read.kinds);
    diagnostics.push(...read.diagnostics);
  }
  return { kinds, diagnostics };
}

/** The kinds a rule's single group, version and resource name: built in, else a loaded CRD's. */
function ruleKinds(
  group: string,
  version: string,
  resource: string,
  crds: readonly KindSchema[],
): { apiVersion: string; kind: string }[] {
  const apiVersion = group === "" ? version : `${group}/${version}`;
  const builtin = builtinKinds().filter(
    (k) => k.apiVersion === apiVersion && resourceForKind(k.kind) === resource,
  );
  if (builtin.length > 0) return builtin;
  return crds.filter((k) => k.apiVersion === apiVersion && k.resource === resource);
}

/**
 * The apiVersion and kind of `object` for a policy whose resourceRules name one kind (each rule one
 * group, one version and one resource, no wildcard or subresource); undefined otherwise.
 */
function matchedKind(
  policy: ParsedPolicy,
  crds: readonly KindSchema[],
): { apiVersion: string; kind: string } | undefined {
  const rules = policy.matchConstraints?.resourceRules ?? [];
  if (rules.length === 0) return undefined;
  const found = new Map<string, { apiVersion: string; kind: string }>();
  for (const r of rules) {
    const [g, v, res] = [r.apiGroups, r.apiVersions, r.resources];
    if (g.length !== 1 || v.length !== 1 || res.length !== 1) return undefined;
    const [group, version, resource] = [g[0] as string, v[0] as string, res[0] as string];
    if ([group, version, resource].some((x) => x.includes("*")) || resource.includes("/")) return undefined;
    const kinds = ruleKinds(group, version, resource, crds);
    if (kinds.length !== 1) return undefined;
    const k = kinds[0] as { apiVersion: string; kind: string };
    found.set(`${k.apiVersion} ${k.kind}`, k);
  }
  return found.size === 1 ? [...found.values()][0] : undefined;
}

/**
 * The schema types of a policy's `object` (the one kind its matchConstraints name) and `params` (its
 * paramKind), from the built-in schemas and the custom resources given; undefined when neither has a
 * schema (both stay dyn, and there is nothing more to check).
 */
export function policySchemaTypes(
  policy: ParsedPolicy,
  crds: readonly KindSchema[],
): PolicySchemaTypes | undefined {
  const messages: MessageType[] = [];
  const fieldNames = new Map<string, readonly string[]>();
  const misses: [string, string][] = [];
  const typed = (
    gvk: { apiVersion: string; kind: string } | undefined,
    name: string,
  ): SchemaTypedKind | undefined => {
    const schema = gvk && kindSchema(gvk.apiVersion, gvk.kind, crds);
    const t = schema && kindCelType(schema, name, { recognizeKeywordAsFieldName: true, untypedAsDyn: true });
    if (t === undefined || gvk === undefined) return undefined;
    for (const m of t.messages) {
      if (fieldNames.has(m.name)) continue;
      // Records a miss so that an `undefined field` warning can name the field meant.
      messages.push({
        name: m.name,
        field: (f) => {
          const ft = m.field(f);
          if (ft === undefined) misses.push([m.name, f]);
          return ft;
        },
      });
      fieldNames.set(m.name, t.fieldNames.get(m.name) ?? []);
    }
    return { kind: gvk.kind, type: t.type };
  };
  const objectKind = matchedKind(policy, crds);
  const object = typed(objectKind, objectKind?.kind ?? "");
  const pk = policy.paramKind;
  // The params' types are named apart from the object's unless they are the same kind.
  const sameKind = pk && objectKind && pk.apiVersion === objectKind.apiVersion && pk.kind === objectKind.kind;
  const params = pk && typed(pk, sameKind ? pk.kind : `params.${pk.kind}`);
  if (object === undefined && params === undefined) return undefined;
  return { object, params, messages, fieldNames, misses };
}

/** The checker environment of an expression with `object`, `oldObject` and `params` typed from schemas. */
export function schemaCheckEnv(
  types: PolicySchemaTypes,
  options: {
    /** null when the policy has no paramKind (params undeclared), else its type without a schema. */
    readonly params: CelType | null;
    readonly variables: Iterable<readonly [string, CelType | undefined]>;
    readonly mutation: boolean;
    readonly extras: CelExtras;
    readonly kubernetesVersion: string | undefined;
    /** false for a messageExpression, which the API server compiles without `authorizer`. */
    readonly authorizer: boolean;
  },
): CheckEnv {
  const object = types.object?.type;
  return admissionCheckEnv({
    authorizer: options.authorizer,
    ...(object === undefined ? {} : { object, oldObject: object }),
    schemaMessages: types.messages,
    params: options.params === null ? null : (types.params?.type ?? options.params),
    variables: options.variables,
    mutation: options.mutation,
    extras: options.extras,
    ...(options.kubernetesVersion === undefined ? {} : { kubernetesVersion: options.kubernetesVersion }),
  });
}

/** The note under a schema-typed warning: which variables were typed from which kinds. */
export function schemaNote(types: PolicySchemaTypes): string {
  const parts = [
    ...(types.object ? [`object typed as ${types.object.kind}`] : []),
    ...(types.params ? [`params typed as ${types.params.kind}`] : []),
  ];
  return `(with ${parts.join(" and ")} from ${parts.length > 1 ? "their schemas" : "its schema"})`;
}

/**
 * Whether a call no overload takes fails only because its operands hold two different schema object
 * types (`containers + initContainers`: `list(Pod.spec.containers.@idx)` and
 * `list(Pod.spec.initContainers.@idx)`), which the checker names by their path, though the objects are
 * alike. The API server type-checks only ValidatingAdmissionPolicies (their status controller,
 * typechecking.go); a MutatingAdmissionPolicy is never typed against a schema, and at run time its
 * objects are untyped maps, so such a call works: for a mutating policy it is no warning.
 */
export function schemaTypeClash(operands: readonly CelType[]): boolean {
  const names = new Set<string>();
  const visit = (t: CelType): void => {
    if (t.kind === "struct") names.add(t.name);
    for (const p of t.params) visit(p);
  };
  for (const t of operands) visit(t);
  return names.size > 1;
}

const UNDEFINED_FIELD = /^undefined field '([^']+)'/;

/**
 * "did you mean 'containers'?" for an `undefined field 'containres'` the schema-typed check found:
 * the closest field of the type the field was looked up on (the last miss of that name). A keyword
 * field is offered as written (`namespace`, which the schema declares as `__namespace__`).
 */
export function fieldHint(types: PolicySchemaTypes, message: string): string | undefined {
  const field = UNDEFINED_FIELD.exec(message)?.[1];
  if (field === undefined) return undefined;
  const miss = types.misses.findLast(([, f]) => f === field);
  if (miss === undefined) return undefined;
  const names = (types.fieldNames.get(miss[0]) ?? []).map((n) => {
    const word = /^__([a-z]+)__$/.exec(n)?.[1];
    return word !== undefined && CEL_RESERVED.has(word) ? word : n;
  });
  const near = closestName(field, names);
  return near === undefined || near === field ? undefined : `did you mean '${near}'?`;
}
