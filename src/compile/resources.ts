/**
 * Rules that can never match: a resourceRule naming a resource its API group does not have, as the
 * built-in API (the kinds celgate has schemas for, the default release) and the loaded
 * CustomResourceDefinitions define them. The API server accepts such a rule (validation.go checks
 * only its form), and the policy or binding then never applies: `resources: ["deployment"]`,
 * `["Deployment"]`, or `apiGroups: [""]` with `deployments`. A warning with a did-you-mean
 * (PE_UNKNOWN_RESOURCE); a group celgate knows nothing of (no built-in kind, no loaded CRD) is not
 * judged, nor are wildcards.
 */
import type { Diagnostic } from "../errors.ts";
import { resourceForKind, splitApiVersion } from "../kube/kinds.ts";
import { builtinKinds, isCustomResourceDefinition } from "../kube/schemas/index.ts";
import { closestName } from "../policy/fields.ts";
import type { MatchResources, ParsedBinding, ParsedPolicy, ResourceObject } from "../policy/types.ts";

/** Built-in resources by group, from the built-in kinds' schemas (read once). */
let builtin: ReadonlyMap<string, ReadonlySet<string>> | undefined;

function builtinResources(): ReadonlyMap<string, ReadonlySet<string>> {
  if (builtin) return builtin;
  const out = new Map<string, Set<string>>();
  for (const k of builtinKinds()) {
    const { group } = splitApiVersion(k.apiVersion);
    const set = out.get(group) ?? new Set<string>();
    out.set(group, set);
    set.add(resourceForKind(k.kind));
  }
  builtin = out;
  return out;
}

/** Resources by group: the built-in ones and those of the CRDs among `objects`. */
function knownResources(objects: readonly ResourceObject[]): Map<string, Set<string>> {
  const out = new Map([...builtinResources()].map(([g, r]) => [g, new Set(r)] as const));
  for (const o of objects) {
    if (!isCustomResourceDefinition(o.object)) continue;
    const spec = o.object.spec as { group?: unknown; names?: { plural?: unknown } } | undefined;
    const group = spec?.group;
    const plural = spec?.names?.plural;
    if (typeof group !== "string" || typeof plural !== "string") continue;
    const set = out.get(group) ?? new Set<string>();
    out.set(group, set);
    set.add(plural);
  }
  return out;
}

function groupName(group: string): string {
  return group === "" ? 'the core group ("")' : `group "${group}"`;
}

/** Why `resource` is in none of `groups`, with the likely one; undefined when it is, or cannot be told. */
function problem(
  resource: string,
  groups: readonly string[],
  known: Map<string, Set<string>>,
): string | undefined {
  const name = resource.split("/")[0] ?? resource;
  // A wildcard group may hold a custom resource whose CRD is not loaded: not judged.
  if (name === "" || name.includes("*") || groups.includes("*")) return undefined;
  const judged = groups.filter((g) => known.has(g));
  if (judged.length === 0 || judged.length < groups.length) return undefined;
  if (judged.some((g) => known.get(g)?.has(name))) return undefined;
  const where = judged.map(groupName).join(" or ");
  const elsewhere = [...known].filter(([, r]) => r.has(name)).map(([g]) => g);
  if (elsewhere.length > 0)
    return `resource "${name}" is not served by ${where} but by ${elsewhere.map(groupName).join(" or ")}, so the rule never matches`;
  const candidates = [...new Set(judged.flatMap((g) => [...(known.get(g) ?? [])]))];
  const near = closestName(name, candidates) ?? candidates.find((c) => c === resourceForKind(name));
  return `resource "${name}" is not served by ${where}, so the rule never matches${near ? `; did you mean "${near}"?` : ""}`;
}

function matchWarnings(
  match: MatchResources | undefined,
  base: string,
  object: ParsedPolicy | ParsedBinding,
  known: Map<string, Set<string>>,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [key, rules] of [
    ["resourceRules", match?.resourceRules ?? []],
    ["excludeResourceRules", match?.excludeResourceRules ?? []],
  ] as const)
    rules.forEach((rule, i) => {
      rule.resources.forEach((resource, j) => {
        const message = problem(resource, rule.apiGroups, known);
        if (message === undefined) return;
        const path = `${base}.${key}[${i}].resources[${j}]`;
        out.push({
          code: "PE_UNKNOWN_RESOURCE",
          severity: "warning",
          message,
          path,
          location: object.source.locate(path),
          object: { kind: object.kind, name: object.name },
        });
      });
    });
  return out;
}

/** The rules of `policies` and `bindings` that name a resource their groups do not have. */
export function unknownResourceWarnings(
  policies: readonly ParsedPolicy[],
  bindings: readonly ParsedBinding[],
  objects: readonly ResourceObject[],
): Diagnostic[] {
  const known = knownResources(objects);
  return [
    ...policies.flatMap((p) => matchWarnings(p.matchConstraints, "spec.matchConstraints", p, known)),
    ...bindings.flatMap((b) => matchWarnings(b.matchResources, "spec.matchResources", b, known)),
  ];
}
