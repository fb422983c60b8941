/**
 * Why a function is missing from the environment a new expression gets at a Kubernetes release:
 * the library that declares it arrives later (environment/base.go IntroducedVersion, one minor
 * later for new expressions; or with the vendored cel-go, cel/env/releases.ts BINARY_LIBRARIES).
 * Compilation adds this to cel-go's "undeclared reference" so that `check --kubernetes-version 1.30`
 * says "`semver` arrives in 1.33 (usable in new expressions from 1.34)".
 */
import {
  arrivalNote,
  BINARY_LIBRARIES,
  checkEnvironment,
  compareReleases,
  type Release,
} from "../env/releases.ts";
import { ALL_DECLS, type LibraryDecl } from "./decls/index.ts";

/** The release whose new expressions first have `lib`. */
function usableFrom(lib: LibraryDecl): Release {
  if (BINARY_LIBRARIES[lib.name] !== undefined) return lib.kubernetes;
  const [major = 1, minor = 0] = lib.kubernetes.split(".").map(Number);
  return `${major}.${minor + 1}`;
}

/**
 * "`semver` arrives in 1.33 (usable in new expressions from 1.34)" when no library of the
 * environment a new expression gets at `release` declares `name` and a later Kubernetes library
 * does; undefined otherwise (declared there, or by no Kubernetes library at all).
 */
export function unavailableAt(name: string, release: Release): string | undefined {
  const env = checkEnvironment(release);
  const binary = new Set(env.withLibraries);
  const macroOf = MACRO_LIBRARIES[name];
  const declaring = ALL_DECLS.filter(
    (l) =>
      l.kubernetes !== "none" &&
      // MutatingAdmissionPolicy's own library is a matter of the policy kind, not of the release.
      l.name !== "kubernetes.jsonpatch" &&
      (macroOf === undefined ? l.functions.some((f) => f.name === name) : l.name === macroOf.library),
  );
  const available = (l: LibraryDecl) =>
    binary.has(l.name) || compareReleases(env.kubernetesVersion, l.kubernetes) >= 0;
  if (declaring.length === 0 || declaring.some(available)) return undefined;
  const first = [...declaring].sort((a, b) => compareReleases(usableFrom(a), usableFrom(b)))[0];
  const what = macroOf === undefined ? `\`${name}\`` : macroOf.what;
  return first === undefined ? undefined : `${what} ${arrivalNote(first.kubernetes, first.name)}`;
}

/**
 * Macros that come with a library (syntax/parse.ts SyntaxOptions): an undeclared call of one of
 * these names is that macro at a release without its library (the one-variable forms of `all`,
 * `exists` and `existsOne` are cel-go's own, always expanded).
 */
const MACRO_LIBRARIES: Readonly<Record<string, { readonly library: string; readonly what: string }>> = {
  all: { library: "comprehensions", what: "`all` with two variables" },
  exists: { library: "comprehensions", what: "`exists` with two variables" },
  existsOne: { library: "comprehensions", what: "`existsOne` with two variables" },
  exists_one: { library: "comprehensions", what: "`exists_one` with two variables" },
  transformList: { library: "comprehensions", what: "`transformList`" },
  transformMap: { library: "comprehensions", what: "`transformMap`" },
  transformMapEntry: { library: "comprehensions", what: "`transformMapEntry`" },
  sortBy: { library: "lists", what: "`sortBy`" },
};
