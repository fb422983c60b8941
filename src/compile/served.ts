/**
 * What the Kubernetes release a policy set is compiled for says of its policies and bindings as
 * objects (cel/env/releases.ts), apart from their expressions:
 *
 * - whether it serves the API versions they are written in: a version the release does not have at
 *   all is an error, as `kubectl apply` would fail with "no matches for kind"; one it has only
 *   behind a feature gate or `--runtime-config` is a warning that says what turns it on;
 * - whether their names are reserved for manifest-based admission (KEP-5793, `.static.k8s.io`).
 */
import {
  compareReleases,
  parseRelease,
  RELEASES,
  type Release,
  releaseModel,
  servesApiVersion,
} from "../cel/index.ts";
import type { Diagnostic } from "../errors.ts";
import type { ParsedBinding, ParsedPolicy } from "../policy/types.ts";

/** `admissionregistration.k8s.io/v1beta1` → `v1beta1`. */
function versionOf(apiVersion: string): string {
  return apiVersion.slice(apiVersion.indexOf("/") + 1);
}

/** ` (from 1.34)` or ` (until 1.31)`: the modelled releases that do serve the version, if any. */
function servedElsewhere(release: Release, family: "validating" | "mutating", version: string): string {
  const serving = RELEASES.filter((r) => servesApiVersion(r, family, version).served !== "no");
  const later = serving.find((r) => compareReleases(r, release) > 0);
  if (later !== undefined) return ` (from ${later})`;
  const earlier = serving.filter((r) => compareReleases(r, release) < 0).pop();
  return earlier === undefined ? "" : ` (until ${earlier})`;
}

/** The problem with `object`'s apiVersion at `release`, if any. */
export function apiVersionProblem(
  object: ParsedPolicy | ParsedBinding,
  release: Release,
): Diagnostic | undefined {
  const base = {
    path: "apiVersion",
    location: object.source.locate("apiVersion"),
    object: { kind: object.kind, name: object.name },
  };
  const parsed = parseRelease(release);
  // The command line validates the release; a library caller's bad one is reported, not thrown.
  if (!parsed.ok) return { ...base, code: "PE_FIELD_VALUE", severity: "error", message: parsed.error };
  const family = object.kind.startsWith("Validating") ? "validating" : "mutating";
  const version = versionOf(object.apiVersion);
  const verdict = servesApiVersion(parsed.value, family, version);
  if (verdict.served === "yes") return undefined;
  if (verdict.served === "off-by-default")
    return {
      ...base,
      code: "PE_FIELD_VALUE",
      severity: "warning",
      message: `Kubernetes ${parsed.value} serves ${object.kind} ${version} only with ${verdict.enable}`,
    };
  const when = servedElsewhere(parsed.value, family, version);
  const others = verdict.versions.length === 0 ? "" : `; it serves ${verdict.versions.join(", ")}`;
  return {
    ...base,
    code: "PE_FIELD_VALUE",
    severity: "error",
    message: `Kubernetes ${parsed.value} does not serve ${object.kind} ${version}${when}${others}`,
  };
}

/** manifest.StaticConfigSuffix: names reserved for objects loaded from a staticManifestsDir. */
const STATIC_SUFFIX = ".static.k8s.io";

/**
 * A name ending in `.static.k8s.io` at `release`: refused where ManifestBasedAdmissionControlConfig
 * is on by default (1.37 on: each admissionregistration strategy's Validate calls
 * ValidateStaticSuffix), a warning where the gate exists but is off (1.36: WarningsOnCreate's
 * WarningsForStaticSuffix); the API server's words (pkg/apis/admissionregistration/validation/
 * static_suffix.go).
 */
export function staticNameProblem(
  object: ParsedPolicy | ParsedBinding,
  release: Release,
): Diagnostic | undefined {
  const parsed = parseRelease(release);
  if (!parsed.ok || !object.name.endsWith(STATIC_SUFFIX)) return undefined;
  const rule = releaseModel(parsed.value).staticNames;
  if (rule === "allowed") return undefined;
  return {
    code: "PE_FIELD_VALUE",
    severity: rule === "refused" ? "error" : "warning",
    message: `names ending with "${STATIC_SUFFIX}" are reserved for static manifest-based configurations and cannot be managed via the API`,
    path: "metadata.name",
    location: object.source.locate("metadata.name"),
    object: { kind: object.kind, name: object.name },
  };
}
