/**
 * The Kubernetes releases celgate models, and what each one gives an admission policy: the CEL
 * environment a new expression is compiled against, the API versions of the policy kinds it
 * serves, and the run-time behaviours that differ between releases. The one place that says which
 * release is the newest: the checker (cel/check), the built-in schemas and the defaults
 * (kube/schemas, kube/defaults) all follow it.
 *
 * Sources, all in kubernetes/kubernetes:
 * - staging/src/k8s.io/apiserver/pkg/cel/environment/environment.go: an EnvSet has a
 *   NewExpressions environment holding only the options introduced at or before its compatibility
 *   version (feature-gated options when their gate is on), used to validate every expression
 *   written to the API; and a StoredExpressions environment holding every option the binary knows,
 *   used to run what is already stored.
 * - staging/src/k8s.io/apiserver/pkg/cel/environment/base.go DefaultCompatibilityVersion: the
 *   compatibility version is the binary's minimum compatibility version, one minor below it
 *   (component-base/compatibility/version.go `binaryVersion.SubtractMinor(1)`; before 1.32 a
 *   constant, likewise one below: `version.MajorMinor(1, 30)` in 1.31). So a library base.go
 *   introduces in 1.33 compiles in new expressions from 1.34, and runs in stored ones from 1.33.
 * - pkg/features/kube_features.go and apiserver/pkg/features: MutatingAdmissionPolicy (alpha 1.32,
 *   beta 1.34, both off by default; GA 1.36, KEP-3962), AuthorizeWithSelectors (alpha 1.31 off,
 *   beta 1.32 on, GA 1.34).
 * - staging/src/k8s.io/api/admissionregistration/v1alpha1/zz_generated.prerelease-lifecycle.go:
 *   ValidatingAdmissionPolicy v1alpha1 is no longer served from 1.32 (kubernetes#129207 removed it);
 *   v1beta1/zz_generated.prerelease-lifecycle.go: its v1beta1 is removed in 1.34 (LIFECYCLE below).
 * - The cel-go each release vendors (its go.mod): v0.26.0 in 1.36.3, v0.29.2 in 1.37.2, and
 *   cel.dev/cel-go v0.33.2 in 1.38.0-beta.0 (k8s.io/apiserver v0.38.0-beta.0's go.mod). What a
 *   cel-go upgrade changes follows the release itself (BINARY_LIBRARIES, BINARY_REMOVALS).
 *
 * 1.37 (k8s.io/kubernetes v1.37.2) is the default everywhere. 1.38 is a preview, modelled from the
 * newest pre-release the Go module proxy serves, v1.38.0-beta.0 (k8s.io/apiserver and k8s.io/api
 * v0.38.0-beta.0): it is used only when asked for by name, and `check --matrix` shows it.
 */

/** A Kubernetes minor release as `major.minor` (`1.33`). */
export type Release = string;

/** The oldest release celgate models: ValidatingAdmissionPolicy went GA (admissionregistration/v1) in 1.30. */
export const OLDEST_RELEASE: Release = "1.30";

/**
 * The release celgate assumes when none is given, everywhere: the CEL environment, the built-in
 * kinds' schemas (kube/schemas/data) and the API server's defaults (kube/defaults).
 */
export const DEFAULT_RELEASE: Release = "1.37";

/** The newest release celgate models: a preview (PREVIEW_RELEASES), used only when named. */
export const NEWEST_RELEASE: Release = "1.38";

/** Releases modelled from a pre-release's source (v1.38.0-beta.0): what they say may still change. */
export const PREVIEW_RELEASES: readonly Release[] = ["1.38"];

/** Whether `release` is a preview (PREVIEW_RELEASES). */
export function isPreview(release: Release): boolean {
  return PREVIEW_RELEASES.includes(release);
}

function minorOf(release: Release): number {
  return Number(release.split(".")[1]);
}

/** `a` compared with `b`: negative when older, 0 when equal, positive when newer. */
export function compareReleases(a: Release, b: Release): number {
  const [a1 = 0, a2 = 0] = a.split(".").map(Number);
  const [b1 = 0, b2 = 0] = b.split(".").map(Number);
  return a1 !== b1 ? a1 - b1 : a2 - b2;
}

/** Every release modelled, oldest first. */
export const RELEASES: readonly Release[] = Array.from(
  { length: minorOf(NEWEST_RELEASE) - minorOf(OLDEST_RELEASE) + 1 },
  (_, i) => `1.${minorOf(OLDEST_RELEASE) + i}`,
);

/** The release one minor after `release` (`1.33` → `1.34`). */
export function nextRelease(release: Release): Release {
  const [major = 1, minor = 0] = release.split(".").map(Number);
  return `${major}.${minor + 1}`;
}

/** The release one minor before `release` (`1.33` → `1.32`). */
export function previousRelease(release: Release): Release {
  const [major = 1, minor = 0] = release.split(".").map(Number);
  return `${major}.${Math.max(0, minor - 1)}`;
}

export type ParsedRelease =
  | { readonly ok: true; readonly value: Release }
  | { readonly ok: false; readonly error: string };

/**
 * `1.33` (also `v1.33` and a patch release, `1.33.2`, which behaves as its minor) → `1.33`; anything
 * else, or a release outside the modelled range, is an error that names the range.
 */
export function parseRelease(text: string): ParsedRelease {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(text.trim());
  const range = `${OLDEST_RELEASE} to ${NEWEST_RELEASE} (${PREVIEW_RELEASES.join(", ")} a preview)`;
  if (!m) return { ok: false, error: `'${text}' is not a Kubernetes release; expected X.Y, one of ${range}` };
  const release = `${Number(m[1])}.${Number(m[2])}`;
  if (compareReleases(release, OLDEST_RELEASE) < 0 || compareReleases(release, NEWEST_RELEASE) > 0)
    return { ok: false, error: `Kubernetes ${release} is not modelled; celgate models ${range}` };
  return { ok: true, value: release };
}

/** An admissionregistration.k8s.io version of a policy kind at one release. */
export interface ServedVersion {
  readonly version: "v1" | "v1beta1" | "v1alpha1";
  /** Served out of the box; otherwise only once enabled as `enable` says. */
  readonly byDefault: boolean;
  /** What turns it on when it is not on by default. */
  readonly enable?: string;
}

/** What one release gives an admission policy. */
export interface ReleaseModel {
  readonly release: Release;
  /**
   * The release whose CEL environment a new or changed expression is compiled against: the
   * compatibility version, one minor below (base.go DefaultCompatibilityVersion).
   */
  readonly newExpressions: Release;
  /** The release whose CEL environment an expression already stored runs in: the release itself. */
  readonly storedExpressions: Release;
  /** ValidatingAdmissionPolicy and its binding: the versions that exist at this release. */
  readonly validatingPolicy: readonly ServedVersion[];
  /** MutatingAdmissionPolicy and its binding: the versions that exist at this release. */
  readonly mutatingPolicy: readonly ServedVersion[];
  /** Whether MutatingAdmissionPolicy runs without turning its feature gate on. */
  readonly mutatingPolicyByDefault: boolean;
  /**
   * Checker libraries (cel/check/decls names) a new expression has at this release although base.go
   * does not version them: they come with the cel-go the release vendors, so they follow the
   * release itself, not the compatibility version (see BINARY_LIBRARIES).
   */
  readonly binaryLibraries: readonly string[];
  /**
   * Checker overloads (cel/check/decls ids) the release's cel-go no longer declares, whatever the
   * compatibility version (BINARY_REMOVALS).
   */
  readonly binaryRemovedOverloads: readonly string[];
  /** Run-time behaviours that differ between releases (the cel-go each release vendors). */
  readonly runtime: RuntimeSwitches;
  /** Modelled from a pre-release (PREVIEW_RELEASES). */
  readonly preview: boolean;
  /**
   * Names ending in `.static.k8s.io`, reserved for manifest-based admission (KEP-5793) by the
   * ManifestBasedAdmissionControlConfig gate (alpha, off, in 1.36; beta, on by default, from 1.37):
   * `refused` once the gate is on by default (pkg/apis/admissionregistration/validation
   * static_suffix.go ValidateStaticSuffix, called by each admissionregistration strategy's
   * Validate), `warning` while it exists and is off (WarningsForStaticSuffix), `allowed` before.
   */
  readonly staticNames: "allowed" | "warning" | "refused";
}

/**
 * Libraries that arrive with a cel-go upgrade rather than a base.go IntroducedVersion, and the
 * release that first vendors them: base.go enables `cel.OptionalTypes()` at 1.28 without a
 * version, which gives the newest the vendored cel-go has, version 2 (first, last, unwrap) since
 * cel-go v0.23, vendored from 1.33. Such a library is in the NewExpressions environment of the
 * release that vendors it.
 */
export const BINARY_LIBRARIES: Readonly<Record<string, Release>> = { "optional.v2": "1.33" };

/**
 * Overloads a cel-go upgrade stopped declaring, and the release that first vendors that cel-go: its
 * checker refuses them in every expression from then on, new or stored. cel-go v0.29 (Kubernetes
 * 1.37) dropped `duration(int)` from common/stdlib/standard.go (overloads.IntToDuration).
 */
export const BINARY_REMOVALS: Readonly<Record<string, Release>> = { int64_to_duration: "1.37" };

/** The run-time behaviours that change with the release, as switches of the CEL environment. */
export interface RuntimeSwitches {
  /**
   * `'abc'.indexOf('c', 3)` and `lastIndexOf` with an offset at or past the end give -1 (cel-go
   * ext/strings.go since v0.22, Kubernetes 1.32); before, an error.
   */
  readonly indexOfPastEndIsMinusOne: boolean;
  /**
   * The optional library's version: 2 adds `list.first()`, `list.last()` and `optional.unwrap()`
   * (cel-go cel/library.go; base.go's `cel.OptionalTypes()` takes cel-go's newest, and 1.33
   * vendors a cel-go with version 2).
   */
  readonly optionalVersion: 1 | 2;
  /**
   * The authorizer's `fieldSelector`/`labelSelector` (library.AuthzSelectors, base.go 1.31, behind
   * AuthorizeWithSelectors): `stored` once the library exists, `new` once new expressions may use
   * it (the gate on by default, 1.32), `none` before.
   */
  readonly authzSelectors: "none" | "stored" | "new";
}

const FEATURE_GATE_MAP = "the MutatingAdmissionPolicy feature gate and --runtime-config";

/**
 * One API version of a policy kind (and its binding), as the types' prerelease-lifecycle tags say
 * (k8s.io/api admissionregistration/<version>/zz_generated.prerelease-lifecycle.go). The API server
 * serves a version from `introduced` and, once `removed` is reached, not at all, whatever
 * --runtime-config says (apiserver/pkg/server/deleted_kinds.go). A GA version (no lifecycle) is
 * served by default; beta and alpha ones only when enabled (beta APIs are off by default since 1.24).
 */
interface Lifecycle {
  readonly kind: "validating" | "mutating";
  readonly version: ServedVersion["version"];
  readonly introduced: Release;
  readonly removed?: Release;
  /** What turns it on; absent for a GA version, served by default. */
  readonly enable?: string;
}

const LIFECYCLE: readonly Lifecycle[] = [
  { kind: "validating", version: "v1", introduced: "1.30" },
  {
    kind: "validating",
    version: "v1beta1",
    introduced: "1.28",
    removed: "1.34",
    enable: "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
  },
  {
    kind: "validating",
    version: "v1alpha1",
    introduced: "1.26",
    removed: "1.32",
    enable: "--runtime-config=admissionregistration.k8s.io/v1alpha1=true",
  },
  { kind: "mutating", version: "v1", introduced: "1.36" },
  {
    kind: "mutating",
    version: "v1beta1",
    introduced: "1.34",
    removed: "1.40",
    enable: `${FEATURE_GATE_MAP}=admissionregistration.k8s.io/v1beta1=true`,
  },
  // 1.36's and 1.37's lifecycle files remove it in 1.38; 1.38.0-beta.0's own no longer do (it is
  // deprecated, with no removal), and a server follows its own files: 1.38 still serves it.
  {
    kind: "mutating",
    version: "v1alpha1",
    introduced: "1.32",
    enable: `${FEATURE_GATE_MAP}=admissionregistration.k8s.io/v1alpha1=true`,
  },
];

function servedVersions(release: Release, kind: Lifecycle["kind"]): ServedVersion[] {
  return LIFECYCLE.filter(
    (l) =>
      l.kind === kind &&
      compareReleases(release, l.introduced) >= 0 &&
      (l.removed === undefined || compareReleases(release, l.removed) < 0),
  ).map((l) =>
    l.enable === undefined
      ? { version: l.version, byDefault: true }
      : { version: l.version, byDefault: false, enable: l.enable },
  );
}

const MODELS = new Map<Release, ReleaseModel>(
  RELEASES.map((release) => [
    release,
    {
      release,
      newExpressions: previousRelease(release),
      storedExpressions: release,
      validatingPolicy: servedVersions(release, "validating"),
      mutatingPolicy: servedVersions(release, "mutating"),
      mutatingPolicyByDefault: compareReleases(release, "1.36") >= 0,
      binaryLibraries: Object.entries(BINARY_LIBRARIES)
        .filter(([, since]) => compareReleases(release, since) >= 0)
        .map(([name]) => name),
      binaryRemovedOverloads: Object.entries(BINARY_REMOVALS)
        .filter(([, since]) => compareReleases(release, since) >= 0)
        .map(([id]) => id),
      preview: isPreview(release),
      staticNames:
        compareReleases(release, "1.37") >= 0
          ? "refused"
          : compareReleases(release, "1.36") >= 0
            ? "warning"
            : "allowed",
      runtime: {
        indexOfPastEndIsMinusOne: compareReleases(release, "1.32") >= 0,
        optionalVersion: compareReleases(release, "1.33") >= 0 ? 2 : 1,
        authzSelectors:
          compareReleases(release, "1.32") >= 0
            ? "new"
            : compareReleases(release, "1.31") >= 0
              ? "stored"
              : "none",
      },
    },
  ]),
);

/** The model of a release celgate models (see parseRelease); the default when none is given. */
export function releaseModel(release: Release = DEFAULT_RELEASE): ReleaseModel {
  const model = MODELS.get(release);
  if (model === undefined) throw new RangeError(`Kubernetes ${release} is not modelled`);
  return model;
}

/**
 * The release whose environment a new expression is compiled against at `release` (its
 * compatibility version), for the checker's `kubernetesVersion`.
 */
export function newExpressionEnvironment(release: Release = DEFAULT_RELEASE): Release {
  return releaseModel(release).newExpressions;
}

/**
 * What the type checker is given for a new expression at `release`: the release whose environment
 * to build (the compatibility version) and the libraries to add whatever that version says. Outside
 * cel/check, `kubernetesVersion` always names the cluster's release; this is the one translation
 * to the checker's environment version.
 */
export function checkEnvironment(release: Release = DEFAULT_RELEASE): {
  readonly kubernetesVersion: Release;
  readonly withLibraries: readonly string[];
  readonly withoutOverloads: readonly string[];
} {
  // A release outside the model (a library caller's; the command line validates) checks as the
  // default: compile/served.ts reports the bad release itself.
  const parsed = parseRelease(release);
  const model = releaseModel(parsed.ok ? parsed.value : DEFAULT_RELEASE);
  return {
    kubernetesVersion: model.newExpressions,
    withLibraries: model.binaryLibraries,
    withoutOverloads: model.binaryRemovedOverloads,
  };
}

/**
 * Why a library (cel/check/decls name) introduced at `introduced` is missing from a release's new
 * expressions: "arrives in 1.33 (usable in new expressions from 1.34)" for what base.go versions,
 * "arrives in 1.33" for what comes with the vendored cel-go (BINARY_LIBRARIES).
 */
export function arrivalNote(introduced: Release, library?: string): string {
  if (library !== undefined && BINARY_LIBRARIES[library] !== undefined) return `arrives in ${introduced}`;
  return `arrives in ${introduced} (usable in new expressions from ${nextRelease(introduced)})`;
}

export type ApiVersionVerdict =
  | { readonly served: "yes" }
  | { readonly served: "off-by-default"; readonly enable: string }
  | { readonly served: "no"; readonly versions: readonly string[] };

/**
 * Whether `release` serves a policy or binding kind at `version` (`v1beta1`): yes, only once
 * enabled, or not at all (with the versions it does serve).
 */
export function servesApiVersion(
  release: Release,
  kind: "validating" | "mutating",
  version: string,
): ApiVersionVerdict {
  const model = releaseModel(release);
  const versions = kind === "validating" ? model.validatingPolicy : model.mutatingPolicy;
  const found = versions.find((v) => v.version === version);
  if (found === undefined) return { served: "no", versions: versions.map((v) => v.version) };
  return found.byDefault ? { served: "yes" } : { served: "off-by-default", enable: found.enable ?? "" };
}
