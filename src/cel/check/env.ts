/**
 * What the checker checks against: declared identifiers (variables and type names) with their
 * types, functions with their overloads, message types with their fields, and the options of
 * cel-go's checker and validators that Kubernetes sets, as they stand at a Kubernetes release.
 */
import { ALL_DECLS, type FunctionDecl, type LibraryDecl } from "./decls/index.ts";
import {
  BOOL,
  BYTES,
  type CelType,
  DOUBLE,
  DURATION,
  DYN,
  INT,
  listOf,
  mapOf,
  NULL,
  objectType,
  optionalOf,
  STRING,
  TIMESTAMP,
  TYPE,
  typeOf,
  typeParam,
  UINT,
} from "./types.ts";
import { DEFAULT_RELEASE, releaseModel } from "../env/releases.ts";
import { atLeast, LATEST_KUBERNETES, VALIDATORS, type ValidatorName } from "./versions.ts";

/** A message (object) type: its name and the type of each declared field. */
export interface MessageType {
  readonly name: string;
  /** The field's type, or undefined when the message declares no such field. */
  field(name: string): CelType | undefined;
}

/** A message type with a fixed set of fields. */
export function messageType(name: string, fields: Readonly<Record<string, CelType>>): MessageType {
  const table = new Map(Object.entries(fields));
  return { name, field: (f) => table.get(f) };
}

export interface CelExtrasFlags {
  readonly bind?: boolean;
  readonly math?: boolean;
  readonly base64?: boolean;
}

export interface CheckEnvOptions {
  /** Declared variables and their types, beyond the standard type names. */
  readonly variables?: Iterable<readonly [string, CelType]>;
  /** Declared message types. */
  readonly messages?: readonly MessageType[];
  /** Message types found by name on demand (MutatingAdmissionPolicy's `Object.*`). */
  readonly resolveMessage?: (name: string) => MessageType | undefined;
  /** For resolveMessage: whether a prefix may begin a name it resolves (`Object`, `Object.spec`). */
  readonly resolvesUnder?: (prefix: string) => boolean;
  /** The Kubernetes release whose environment to check against (`1.34`); the latest by default. */
  readonly kubernetesVersion?: string;
  /** Libraries Kubernetes does not enable, which celgate offers on request. */
  readonly extras?: CelExtrasFlags;
  /** Enable the named libraries whatever the release (`kubernetes.jsonpatch` for mutations). */
  readonly withLibraries?: readonly string[];
  /**
   * Overload ids the release's cel-go no longer declares (cel/env/releases.ts BINARY_REMOVALS); by
   * default those of the default release when no `kubernetesVersion` is given, else none.
   */
  readonly withoutOverloads?: readonly string[];
  /** Replace the library set altogether (tests of cel-go's checker with its own declarations). */
  readonly libraries?: readonly LibraryDecl[];
  /** Override the release's CrossTypeNumericComparisons setting. */
  readonly crossTypeNumericComparisons?: boolean;
  /** Override the release's AST validators. */
  readonly validators?: readonly ValidatorName[];
}

export interface CheckEnv {
  /** Declared identifiers with their types: variables, and the standard type names (`int`: `type(int)`). */
  readonly variables: ReadonlyMap<string, CelType>;
  /**
   * Types the type provider knows by name (cel-go's registry: FindIdent), each mapped to the type
   * it names: `list` is `list(dyn)` here where the declared identifier has `type(list(A))`.
   */
  readonly typeNames: ReadonlyMap<string, CelType>;
  readonly functions: ReadonlyMap<string, FunctionDecl>;
  findMessage(name: string): MessageType | undefined;
  /**
   * Whether a dotted name (`authorizer`, `google.protobuf`, `optional`) begins some declared name:
   * only then can a longer name spelled from it be declared, so only then is it looked up.
   */
  isNamespace(prefix: string): boolean;
  readonly crossTypeNumericComparisons: boolean;
  readonly validators: ReadonlySet<ValidatorName>;
  readonly extras: Required<CelExtrasFlags>;
  /** Names of the enabled libraries. */
  readonly libraries: ReadonlySet<string>;
  /**
   * The macros that come with a library (two-variable comprehensions, the lists extension's
   * `sortBy`), for the parser (syntax/parse.ts SyntaxOptions): cel-go's parser expands only the
   * macros of its environment, so at a release without the library they are plain calls, which the
   * checker then refuses. All on for an environment given its `libraries` outright.
   */
  readonly macros: { readonly twoVarComprehensions: boolean; readonly sortBy: boolean };
}

/** The standard type identifiers (stdlib Types()): each names its type, `list` with a free parameter. */
function standardTypeNames(): [string, CelType][] {
  const named = [BOOL, BYTES, DOUBLE, DURATION, INT, NULL, STRING, TIMESTAMP, TYPE, UINT];
  const out: [string, CelType][] = named.map((t) => [t.name, typeOf(t)]);
  out.push(["list", typeOf(listOf(typeParam("A")))]);
  out.push(["map", typeOf(mapOf(typeParam("A"), typeParam("B")))]);
  return out;
}

/** The registry's own types (types/provider.go NewRegistry). */
function registeredTypes(): [string, CelType][] {
  const named = [BOOL, BYTES, DOUBLE, DURATION, INT, NULL, STRING, TIMESTAMP, TYPE, UINT];
  return [
    ...named.map((t): [string, CelType] => [t.name, t]),
    ["list", listOf(DYN)],
    ["map", mapOf(DYN, DYN)],
  ];
}

/** Types libraries register (cel.Types) and declare as identifiers (cel.Variable of type(T)). */
const LIBRARY_TYPES: Readonly<
  Record<string, { readonly types: [string, CelType][]; readonly declared: boolean }>
> = {
  optional: { types: [["optional_type", optionalOf(typeParam("T"))]], declared: false },
  "kubernetes.net.ip": { types: [["net.IP", objectType("net.IP")]], declared: true },
  "net.cidr": { types: [["net.CIDR", objectType("net.CIDR")]], declared: true },
};

function libraryEnabled(lib: LibraryDecl, version: string, options: CheckEnvOptions): boolean {
  if (options.withLibraries?.includes(lib.name)) return true;
  if (lib.kubernetes === "none") return lib.extra !== undefined && options.extras?.[lib.extra] === true;
  // MutatingAdmissionPolicy's library is added by its environment, not the base one.
  if (lib.name === "kubernetes.jsonpatch") return false;
  return atLeast(version, lib.kubernetes);
}

/** What an environment gets from its libraries: functions, library type names, their namespaces. */
interface LibraryPart {
  readonly libraries: readonly LibraryDecl[];
  readonly functions: ReadonlyMap<string, FunctionDecl>;
  readonly variables: ReadonlyMap<string, CelType>;
  readonly typeNames: ReadonlyMap<string, CelType>;
  /** The namespaces of the names above. */
  readonly namespaces: ReadonlySet<string>;
  readonly libraryNames: ReadonlySet<string>;
}

/** Adds every proper dotted prefix of each name (`a`, `a.b` of `a.b.c`). */
function addNamespaces(names: Iterable<string>, out: Set<string>): void {
  for (const name of names)
    for (let i = name.indexOf("."); i > 0; i = name.indexOf(".", i + 1)) out.add(name.slice(0, i));
}

/** `lib` without the overloads in `removed` (and without functions left with none). */
function withoutOverloads(lib: LibraryDecl, removed: ReadonlySet<string>): LibraryDecl {
  if (!lib.functions.some((f) => f.overloads.some((o) => removed.has(o.id)))) return lib;
  const functions = lib.functions
    .map((f) => ({ name: f.name, overloads: f.overloads.filter((o) => !removed.has(o.id)) }))
    .filter((f) => f.overloads.length > 0);
  return { ...lib, functions };
}

function libraryPart(libraries: readonly LibraryDecl[]): LibraryPart {
  const functions = new Map<string, FunctionDecl>();
  const variables = new Map<string, CelType>(standardTypeNames());
  const typeNames = new Map<string, CelType>(registeredTypes());
  for (const lib of libraries) {
    for (const f of lib.functions) {
      const existing = functions.get(f.name);
      functions.set(
        f.name,
        existing ? { name: f.name, overloads: [...existing.overloads, ...f.overloads] } : f,
      );
    }
    const extra = LIBRARY_TYPES[lib.name];
    for (const [name, t] of extra?.types ?? []) {
      typeNames.set(name, t);
      if (extra?.declared) variables.set(name, typeOf(t));
    }
  }
  const namespaces = new Set<string>();
  addNamespaces([...functions.keys(), ...variables.keys(), ...typeNames.keys()], namespaces);
  return {
    libraries,
    functions,
    variables,
    typeNames,
    namespaces,
    libraryNames: new Set(libraries.map((l) => l.name)),
  };
}

/**
 * Library parts by release and extras: a policy's expressions each get an environment of their own
 * (the variables before them differ), all with the same libraries.
 */
const LIBRARY_PARTS = new Map<string, LibraryPart>();

function librariesFor(options: CheckEnvOptions, version: string): LibraryPart {
  if (options.libraries) return libraryPart(options.libraries);
  const removed =
    options.withoutOverloads ??
    (options.kubernetesVersion === undefined ? releaseModel(DEFAULT_RELEASE).binaryRemovedOverloads : []);
  const key = JSON.stringify([version, options.extras ?? {}, options.withLibraries ?? [], removed]);
  let part = LIBRARY_PARTS.get(key);
  if (part === undefined) {
    const removedSet = new Set(removed);
    part = libraryPart(
      ALL_DECLS.filter((l) => libraryEnabled(l, version, options)).map((l) =>
        withoutOverloads(l, removedSet),
      ),
    );
    LIBRARY_PARTS.set(key, part);
  }
  return part;
}

export function createCheckEnv(options: CheckEnvOptions = {}): CheckEnv {
  const version = options.kubernetesVersion ?? LATEST_KUBERNETES;
  const part = librariesFor(options, version);
  const { functions, typeNames } = part;
  const variables = new Map(part.variables);
  for (const [name, t] of options.variables ?? []) variables.set(name, t);
  const messages = new Map((options.messages ?? []).map((m) => [m.name, m]));
  const resolve = options.resolveMessage;
  const namespaces = new Set(part.namespaces);
  addNamespaces(options.variables === undefined ? [] : [...variables.keys()], namespaces);
  addNamespaces(messages.keys(), namespaces);
  const under = options.resolvesUnder;
  const validators =
    options.validators ?? VALIDATORS.filter((v) => atLeast(version, v.kubernetes)).map((v) => v.name);
  return {
    variables,
    typeNames,
    functions,
    findMessage: (name) => messages.get(name) ?? resolve?.(name),
    isNamespace: (prefix) => namespaces.has(prefix) || under?.(prefix) === true,
    crossTypeNumericComparisons: options.crossTypeNumericComparisons ?? atLeast(version, "1.28"),
    validators: new Set(validators),
    extras: {
      bind: options.extras?.bind ?? false,
      math: options.extras?.math ?? false,
      base64: options.extras?.base64 ?? false,
    },
    libraries: part.libraryNames,
    macros: options.libraries
      ? ALL_MACROS
      : {
          twoVarComprehensions: part.libraryNames.has("comprehensions"),
          sortBy: part.libraryNames.has("lists"),
        },
  };
}

const ALL_MACROS = { twoVarComprehensions: true, sortBy: true } as const;
