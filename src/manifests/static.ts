/**
 * The pre-flight for Kubernetes' manifest-based admission configuration (KEP-5793,
 * ManifestBasedAdmissionControlConfig, alpha in 1.36): a directory of files the API server loads at
 * startup through `staticManifestsDir`. A bad file there stops the API server from starting, so
 * everything it would refuse is an error here, following the loaders
 * (k8s.io/apiserver/pkg/admission/plugin/manifest, .../webhook/manifest/loader,
 * .../policy/manifest/loader) and the "Manifest-Based Admission Control" reference:
 *
 * - the files are the directory's own `.yaml`, `.yml` and `.json` files (not its subdirectories),
 *   decoded strictly: an unknown or duplicate field is an error;
 * - only admissionregistration.k8s.io/v1 objects, of one admission plugin per directory
 *   (ValidatingWebhookConfiguration; MutatingWebhookConfiguration; ValidatingAdmissionPolicy and
 *   its bindings; MutatingAdmissionPolicy and its bindings), alone or in a `v1 List` or typed List;
 * - every name ends with `.static.k8s.io` and is unique within its kind;
 * - webhooks call a `url`, never a `service`; policies have no `paramKind`, bindings no `paramRef`,
 *   and a binding's policyName ends with `.static.k8s.io` and names a policy in the set;
 * - each object passes the validation the REST API applies (celgate's parse and compile stand in for
 *   it for policies, webhook-config.ts for webhooks).
 *
 * Pure: file names and text in, diagnostics out.
 */
import { compilePolicySet } from "../compile/policy.ts";
import type { Diagnostic, SourceLocation } from "../errors.ts";
import { mergePolicySets, parsePolicyText } from "../policy/parse.ts";
import type { PolicySet } from "../policy/types.ts";
import { readObjects, type SourceObject } from "./documents.ts";
import { readWebhookConfiguration } from "./webhook-config.ts";

/** The reserved suffix of every manifest-based object's name (manifest.StaticConfigSuffix). */
export const STATIC_SUFFIX = ".static.k8s.io";
export const STATIC_API_VERSION = "admissionregistration.k8s.io/v1";
/** The files the API server reads from a staticManifestsDir (manifest.LoadFiles). */
export const STATIC_EXTENSIONS = [".yaml", ".yml", ".json"] as const;

/** The admission plugin that reads each kind. */
const PLUGIN_OF: Readonly<Record<string, string>> = {
  ValidatingWebhookConfiguration: "ValidatingAdmissionWebhook",
  MutatingWebhookConfiguration: "MutatingAdmissionWebhook",
  ValidatingAdmissionPolicy: "ValidatingAdmissionPolicy",
  ValidatingAdmissionPolicyBinding: "ValidatingAdmissionPolicy",
  MutatingAdmissionPolicy: "MutatingAdmissionPolicy",
  MutatingAdmissionPolicyBinding: "MutatingAdmissionPolicy",
};

export interface StaticFile {
  /** As shown in diagnostics. */
  readonly path: string;
  readonly text: string;
}

export interface StaticReport {
  /** The admission plugin the directory is for, when its objects name one. */
  readonly plugin?: string;
  /** Objects read, by kind. */
  readonly objects: Readonly<Record<string, number>>;
  readonly diagnostics: readonly Diagnostic[];
}

function error(
  message: string,
  location: SourceLocation,
  path: string,
  object?: { kind: string; name: string },
  code: Diagnostic["code"] = "PE_FIELD_VALUE",
): Diagnostic {
  return {
    code,
    severity: "error",
    message,
    ...(path ? { path } : {}),
    location,
    ...(object ? { object } : {}),
  };
}

function nameOf(o: SourceObject): string {
  const meta = o.value.metadata as { name?: unknown } | undefined;
  return typeof meta?.name === "string" ? meta.name : "";
}

/** The kind and List checks: what the plugins' loaders accept at all. */
function checkKind(o: SourceObject, out: Diagnostic[]): string | undefined {
  const kind = String(o.value.kind ?? "");
  const object = { kind, name: nameOf(o) };
  if (o.list && !(o.list.kind === "List" && o.list.apiVersion === "v1") && o.list.kind !== `${kind}List`)
    out.push(
      error(
        `a ${o.list.apiVersion} ${o.list.kind} cannot hold a ${kind}: use a v1 List or a ${kind}List`,
        o.locate("kind"),
        "kind",
        object,
        "PE_UNKNOWN_KIND",
      ),
    );
  if (!Object.hasOwn(PLUGIN_OF, kind)) {
    out.push(
      error(
        `${String(o.value.apiVersion)} ${kind} cannot be a static manifest: only ValidatingWebhookConfiguration, MutatingWebhookConfiguration, ValidatingAdmissionPolicy(Binding) and MutatingAdmissionPolicy(Binding) can`,
        o.locate("kind"),
        "kind",
        object,
        "PE_UNKNOWN_KIND",
      ),
    );
    return undefined;
  }
  if (o.value.apiVersion !== STATIC_API_VERSION) {
    out.push(
      error(
        `static manifests are read only as ${STATIC_API_VERSION}; got ${JSON.stringify(o.value.apiVersion)}`,
        o.locate("apiVersion"),
        "apiVersion",
        object,
        "PE_UNKNOWN_KIND",
      ),
    );
    return undefined;
  }
  return kind;
}

/** Names: the reserved suffix, and unique within a kind across the directory. */
function checkName(
  o: SourceObject,
  kind: string,
  seen: Map<string, SourceLocation>,
  out: Diagnostic[],
): void {
  const name = nameOf(o);
  const object = { kind, name };
  const at = o.locate("metadata.name");
  if (!name) return; // the object's own validation reports the missing name
  if (!name.endsWith(STATIC_SUFFIX))
    out.push(error(`${kind} name "${name}" must end with "${STATIC_SUFFIX}"`, at, "metadata.name", object));
  const key = `${kind}/${name}`;
  const first = seen.get(key);
  if (first)
    out.push(
      error(
        `duplicate ${kind} name "${name}" (first at ${first.file}:${first.line}:${first.column}): the API server would not start`,
        at,
        "metadata.name",
        object,
        "PE_DUPLICATE",
      ),
    );
  else seen.set(key, at);
}

function checkWebhooks(o: SourceObject, out: Diagnostic[]): void {
  const read = readWebhookConfiguration(o.value, { strict: true, locate: o.locate });
  out.push(...read.diagnostics);
  const hooks = Array.isArray(o.value.webhooks) ? (o.value.webhooks as unknown[]) : [];
  hooks.forEach((h, i) => {
    const cc = (h as { clientConfig?: { service?: unknown; url?: unknown } } | null)?.clientConfig;
    if (cc?.service !== undefined)
      out.push(
        error(
          "clientConfig.service is not supported for static manifests (the service network may not be up when the API server starts); use clientConfig.url",
          o.locate(`webhooks[${i}].clientConfig.service`),
          `webhooks[${i}].clientConfig.service`,
          { kind: String(o.value.kind), name: nameOf(o) },
        ),
      );
  });
}

/** The policy kinds' manifest rules, on the parsed set of the whole directory. */
function checkPolicySet(set: PolicySet, out: Diagnostic[]): void {
  const names = new Set(set.policies.map((p) => `${p.kind}/${p.name}`));
  for (const p of set.policies)
    if (p.paramKind)
      out.push(
        error(
          "spec.paramKind is not supported for static manifests: they cannot reference objects of the API",
          p.source.locate("spec.paramKind"),
          "spec.paramKind",
          { kind: p.kind, name: p.name },
        ),
      );
  for (const b of set.bindings) {
    const object = { kind: b.kind, name: b.name };
    if (b.paramRef)
      out.push(
        error(
          "spec.paramRef is not supported for static manifests",
          b.source.locate("spec.paramRef"),
          "spec.paramRef",
          object,
        ),
      );
    const policyKind =
      b.kind === "ValidatingAdmissionPolicyBinding" ? "ValidatingAdmissionPolicy" : "MutatingAdmissionPolicy";
    if (!b.policyName.endsWith(STATIC_SUFFIX))
      out.push(
        error(
          `spec.policyName "${b.policyName}" must end with "${STATIC_SUFFIX}"`,
          b.source.locate("spec.policyName"),
          "spec.policyName",
          object,
        ),
      );
    else if (!names.has(`${policyKind}/${b.policyName}`))
      out.push(
        error(
          `binding references policy "${b.policyName}", which does not exist in the manifest directory`,
          b.source.locate("spec.policyName"),
          "spec.policyName",
          object,
          "PE_UNKNOWN_POLICY",
        ),
      );
  }
}

/** Checks a staticManifestsDir's files, given in the order the API server reads them (by name). */
export function checkStaticManifests(files: readonly StaticFile[]): StaticReport {
  const diagnostics: Diagnostic[] = [];
  const objects: Record<string, number> = {};
  const seen = new Map<string, SourceLocation>();
  const sets: PolicySet[] = [];
  let plugin: { name: string; at: SourceLocation } | undefined;
  for (const f of files) {
    if (f.text.trim() === "") continue; // manifest.LoadFiles skips empty files
    const read = readObjects(f.text, f.path);
    diagnostics.push(...read.diagnostics);
    if (read.diagnostics.some((d) => d.severity === "error")) continue;
    let policies = false;
    for (const o of read.objects) {
      const kind = checkKind(o, diagnostics);
      if (kind === undefined) continue;
      objects[kind] = (objects[kind] ?? 0) + 1;
      const owner = PLUGIN_OF[kind] as string;
      if (!plugin) plugin = { name: owner, at: o.locate("kind") };
      else if (owner !== plugin.name)
        diagnostics.push(
          error(
            `a ${kind} is for the ${owner} plugin, but this directory is for ${plugin.name} (first at ${plugin.at.file}:${plugin.at.line}): each plugin's staticManifestsDir holds only its own kinds`,
            o.locate("kind"),
            "kind",
            { kind, name: nameOf(o) },
            "PE_UNKNOWN_KIND",
          ),
        );
      checkName(o, kind, seen, diagnostics);
      if (kind.endsWith("WebhookConfiguration")) {
        checkWebhooks(o, diagnostics);
      } else policies = true;
    }
    if (!policies) continue;
    const parsed = parsePolicyText(f.text, f.path);
    sets.push(parsed.set);
    for (const d of parsed.diagnostics) {
      // Strict decoding: a field the type does not have is an error, not a warning.
      const strict = d.severity === "warning" && d.message.startsWith("unknown field");
      diagnostics.push(strict ? { ...d, severity: "error", message: `${d.message} (strict decoding)` } : d);
    }
  }
  const set = mergePolicySets(sets);
  if (set.policies.length + set.bindings.length > 0) {
    checkPolicySet(set, diagnostics);
    diagnostics.push(...compilePolicySet(set).diagnostics);
  }
  return { ...(plugin ? { plugin: plugin.name } : {}), objects, diagnostics };
}
