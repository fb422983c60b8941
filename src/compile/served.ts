/**
 * Whether the Kubernetes release a policy set is compiled for serves the API versions its policies
 * and bindings are written in (cel/env/releases.ts): a version the release does not have at all is
 * an error, as `kubectl apply` would fail with "no matches for kind"; one it has only behind a
 * feature gate or `--runtime-config` is a warning that says what turns it on.
 */
import { parseRelease, type Release, servesApiVersion } from "../cel/index.ts";
import type { Diagnostic } from "../errors.ts";
import type { ParsedBinding, ParsedPolicy } from "../policy/types.ts";

/** `admissionregistration.k8s.io/v1beta1` → `v1beta1`. */
function versionOf(apiVersion: string): string {
  return apiVersion.slice(apiVersion.indexOf("/") + 1);
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
  const served =
    verdict.versions.length === 0
      ? `has no ${object.kind}`
      : `serves ${object.kind} only as ${verdict.versions.join(", ")}`;
  return {
    ...base,
    code: "PE_FIELD_VALUE",
    severity: "error",
    message: `Kubernetes ${parsed.value} ${served}, not ${version}`,
  };
}
