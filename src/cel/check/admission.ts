/**
 * The admission environment's variables and types, as Kubernetes declares them
 * (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go, composition.go, and cel/mutation):
 *
 * - `object`, `oldObject`: dyn, or a schema's type with its message types (`schemaMessages`);
 * - `params`: dyn when the policy has a paramKind, undeclared otherwise (an input too);
 * - `request`: `kubernetes.AdmissionRequest` (BuildRequestType), `namespaceObject`:
 *   `kubernetes.Namespace` (BuildNamespaceType), both message types with declared fields;
 * - `authorizer` and `authorizer.requestResource`;
 * - `variables`: the message type `kubernetes.variables` whose fields are the policy's variables
 *   compiled so far, each typed with its expression's type (composition.go AddField);
 * - for MutatingAdmissionPolicy, the `Object` / `Object.<path>` types of ApplyConfiguration
 *   literals, whose every field is dyn, and `JSONPatch` (mutation/typeresolver.go, jsonpatch.go).
 */
import { type CelExtrasFlags, type CheckEnv, createCheckEnv, type MessageType, messageType } from "./env.ts";
import type { ValidatorName } from "./versions.ts";
import {
  BOOL,
  type CelType,
  DYN,
  INT,
  listOf,
  mapOf,
  objectType,
  STRING,
  TIMESTAMP,
  UNSPECIFIED,
} from "./types.ts";

const gvk = messageType("kubernetes.GroupVersionKind", { group: STRING, version: STRING, kind: STRING });
const gvr = messageType("kubernetes.GroupVersionResource", {
  group: STRING,
  version: STRING,
  resource: STRING,
});
const userInfo = messageType("kubernetes.UserInfo", {
  username: STRING,
  uid: STRING,
  groups: listOf(STRING),
  extra: mapOf(STRING, listOf(STRING)),
});

/** BuildRequestType: `uid`, `object` and `oldObject` are left out by design. */
const admissionRequest = messageType("kubernetes.AdmissionRequest", {
  kind: objectType(gvk.name),
  resource: objectType(gvr.name),
  subResource: STRING,
  requestKind: objectType(gvk.name),
  requestResource: objectType(gvr.name),
  requestSubResource: STRING,
  name: STRING,
  namespace: STRING,
  operation: STRING,
  userInfo: objectType(userInfo.name),
  dryRun: BOOL,
  options: DYN,
});

/** BuildNamespaceType: managedFields, ownerReferences and the like are left out by design. */
const namespaceTypes: readonly MessageType[] = [
  messageType("kubernetes.NamespaceSpec", { finalizers: listOf(STRING) }),
  messageType("kubernetes.NamespaceCondition", {
    status: STRING,
    type: STRING,
    lastTransitionTime: TIMESTAMP,
    message: STRING,
    reason: STRING,
  }),
  messageType("kubernetes.NamespaceStatus", {
    conditions: listOf(objectType("kubernetes.NamespaceCondition")),
    phase: STRING,
  }),
  messageType("kubernetes.NamespaceMetadata", {
    name: STRING,
    generateName: STRING,
    namespace: STRING,
    labels: mapOf(STRING, STRING),
    annotations: mapOf(STRING, STRING),
    UID: STRING,
    creationTimestamp: TIMESTAMP,
    deletionGracePeriodSeconds: INT,
    deletionTimestamp: TIMESTAMP,
    generation: INT,
    resourceVersion: STRING,
    finalizers: listOf(STRING),
  }),
  messageType("kubernetes.Namespace", {
    metadata: objectType("kubernetes.NamespaceMetadata"),
    spec: objectType("kubernetes.NamespaceSpec"),
    status: objectType("kubernetes.NamespaceStatus"),
  }),
];

/** The JSONPatch type: its four fields; any other name has no type, so nothing but dyn fits it. */
const jsonPatch: MessageType = {
  name: "JSONPatch",
  field: (f) => (f === "op" || f === "path" || f === "from" ? STRING : f === "value" ? DYN : UNSPECIFIED),
};

/** mutation.DynamicTypeResolver: `Object` and `Object.<path>` with every field dyn. */
function resolveMutationType(name: string): MessageType | undefined {
  if (name === "JSONPatch") return jsonPatch;
  if (name === "Object" || name.startsWith("Object.")) return { name, field: () => DYN };
  return undefined;
}

/**
 * composition.go convertCelTypeToDeclType: what a policy variable's type becomes as a field of
 * `variables`. Primitives, timestamps and durations stay; lists and maps keep their element types
 * converted the same way; anything else (an optional, a library object, a type, a failed
 * expression) is dyn.
 */
export function variablesFieldType(t: CelType | undefined): CelType {
  if (t === undefined || t.wrapper) return DYN;
  switch (t.kind) {
    case "any":
    case "bool":
    case "bytes":
    case "double":
    case "duration":
    case "int":
    case "null":
    case "string":
    case "timestamp":
    case "uint":
      return t;
    case "list":
      return listOf(variablesFieldType(t.params[0]));
    case "map":
      return mapOf(variablesFieldType(t.params[0]), variablesFieldType(t.params[1]));
    default:
      return DYN;
  }
}

export interface AdmissionCheckOptions {
  /** `object` and `oldObject`'s type; dyn by default. */
  readonly object?: CelType;
  readonly oldObject?: CelType;
  /** `params`' type; dyn by default; null when the policy has no paramKind (then it is undeclared). */
  readonly params?: CelType | null;
  /**
   * The message types `object`, `oldObject` and `params` refer to when they are typed from schemas
   * (src/kube/schemas kindCelType), declared as the DeclTypes of Kubernetes' type checking are.
   */
  readonly schemaMessages?: readonly MessageType[];
  /**
   * The policy's variables compiled before this expression, in order, with their expressions'
   * types (converted as Kubernetes converts them; pass undefined for one that failed to compile).
   */
  readonly variables?: Iterable<readonly [string, CelType | undefined]>;
  /** Declare `authorizer` (true for policies; webhook matchConditions have none). */
  readonly authorizer?: boolean;
  /** Declare `variables` (true for policies; a webhook's matchConditions and `expr` have none). */
  readonly declareVariables?: boolean;
  /** Declare `namespaceObject` and `request` (true by default; a webhook's matchConditions lack the first). */
  readonly declareNamespaceObject?: boolean;
  readonly declareRequest?: boolean;
  /** Variables beyond the admission ones (`celgate expr`'s own bindings), with their types. */
  readonly extraVariables?: Iterable<readonly [string, CelType]>;
  /** MutatingAdmissionPolicy: `Object`, `JSONPatch` and `jsonpatch.escapeKey`. */
  readonly mutation?: boolean;
  /** The release whose environment to build (the checker's version: cel/env/releases.ts checkEnvironment). */
  readonly kubernetesVersion?: string;
  /** Libraries to enable whatever the version (those that come with a release's cel-go). */
  readonly withLibraries?: readonly string[];
  /** Overloads the release's cel-go no longer declares (CheckEnvOptions.withoutOverloads). */
  readonly withoutOverloads?: readonly string[];
  readonly extras?: CelExtrasFlags;
  /** Override the release's AST validators (none: cel-go's checker alone). */
  readonly validators?: readonly ValidatorName[];
}

/** The environment an admission policy's expressions are checked in. */
export function admissionCheckEnv(options: AdmissionCheckOptions = {}): CheckEnv {
  const fields: Record<string, CelType> = {};
  for (const [name, t] of options.variables ?? []) fields[name] = variablesFieldType(t);
  const variablesType = messageType("kubernetes.variables", fields);
  const vars: [string, CelType][] = [
    ["object", options.object ?? DYN],
    ["oldObject", options.oldObject ?? DYN],
  ];
  if (options.declareNamespaceObject ?? true)
    vars.push(["namespaceObject", objectType("kubernetes.Namespace")]);
  if (options.declareRequest ?? true) vars.push(["request", objectType(admissionRequest.name)]);
  if (options.declareVariables ?? true) vars.push(["variables", objectType(variablesType.name)]);
  for (const [name, t] of options.extraVariables ?? []) vars.push([name, t]);
  if (options.params !== null) vars.push(["params", options.params ?? DYN]);
  if (options.authorizer ?? true) {
    vars.push(["authorizer", objectType("kubernetes.authorization.Authorizer")]);
    vars.push(["authorizer.requestResource", objectType("kubernetes.authorization.ResourceCheck")]);
  }
  return createCheckEnv({
    variables: vars,
    messages: [
      gvk,
      gvr,
      userInfo,
      admissionRequest,
      ...namespaceTypes,
      variablesType,
      ...(options.schemaMessages ?? []),
    ],
    ...(options.mutation ? { resolveMessage: resolveMutationType } : {}),
    withLibraries: [...(options.mutation ? ["kubernetes.jsonpatch"] : []), ...(options.withLibraries ?? [])],
    ...(options.kubernetesVersion !== undefined ? { kubernetesVersion: options.kubernetesVersion } : {}),
    ...(options.withoutOverloads !== undefined ? { withoutOverloads: options.withoutOverloads } : {}),
    ...(options.extras !== undefined ? { extras: options.extras } : {}),
    ...(options.validators !== undefined ? { validators: options.validators } : {}),
  });
}
