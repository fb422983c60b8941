/**
 * "Did you mean" for names in expressions. The CEL checker reports an unknown name in cel-go's own
 * words (`undeclared reference to 'objet' (in container '')`, `undefined field 'containres'` for a
 * policy variable, as `variables` is a message type), which stay as they
 * are; what the policy does declare is known here, so a line under the caret names the likely one:
 * a misspelt `variables.<name>`, a variable used before it is defined (variables compile in order),
 * or a misspelt admission variable (`objet`).
 */
import type { Diagnostic } from "../../errors.ts";
import { closestName } from "../../policy/fields.ts";
import type { ParsedPolicy } from "../../policy/types.ts";

/** The names an admission expression may start with (Kubernetes' admission CEL environment). */
const ROOTS = ["object", "oldObject", "request", "params", "namespaceObject", "authorizer", "variables"];

const UNDECLARED = /^undeclared reference to '([^']+)'/;
/** cel-go's words for `variables.<name>` when the policy has no such variable (a field of `variables`). */
const UNDEFINED_FIELD = /^undefined field '([^']+)'/;

const BIND_HINT =
  "cel.bind is not in Kubernetes' CEL environment: allow it with --cel-extras bind, or the celgate.dev/cel-extras annotation on the policy";

/** The unknown name a diagnostic reports: `variables.x` for an undefined field x read off `variables`. */
function unknownName(d: Diagnostic): string | undefined {
  const name = UNDECLARED.exec(d.message)?.[1];
  if (name !== undefined) return name;
  const field = UNDEFINED_FIELD.exec(d.message)?.[1];
  // The caret line shows the expression: the field is a policy variable's when read off `variables`.
  if (field !== undefined && new RegExp(`\\bvariables\\s*\\.\\s*${field}\\b`).test(d.detail ?? ""))
    return `variables.${field}`;
  return undefined;
}

/** `spec.variables[2].expression` → 2. */
function variableIndex(path: string | undefined): number | undefined {
  const m = /^spec\.variables\[(\d+)\]\./.exec(path ?? "");
  return m ? Number(m[1]) : undefined;
}

/** The hint for a diagnostic; without the policy, only those that need none of its names. */
function hintFor(d: Diagnostic, policy: ParsedPolicy | undefined): string | undefined {
  const name = unknownName(d);
  if (name === undefined) return undefined;
  if (name === "cel" && /\bcel\s*\.\s*bind\s*\(/.test(d.detail ?? "")) return BIND_HINT;
  if (name.startsWith("variables.")) {
    if (policy === undefined) return undefined;
    const wanted = name.slice("variables.".length).split(".")[0] ?? "";
    const all = policy.variables.map((v) => v.name);
    const at = all.indexOf(wanted);
    const own = variableIndex(d.path);
    if (at >= 0 && own !== undefined && at >= own)
      return `'variables.${wanted}' is defined at spec.variables[${at}]; a variable can use only the ones before it`;
    const near = closestName(wanted, all);
    if (near !== undefined) return `did you mean 'variables.${near}'?`;
    return all.length > 0
      ? `the policy's variables are ${all.map((v) => `'${v}'`).join(", ")}`
      : "the policy defines no variables (spec.variables)";
  }
  if (name.includes(".")) return undefined;
  const near = closestName(name, ROOTS);
  return near === undefined || near === name ? undefined : `did you mean '${near}'?`;
}

/**
 * The diagnostics with a hint line added under each unknown name the policy suggests a fix for.
 * `policies` are the parsed policies the diagnostics' `object`s name (hints about a policy's own
 * variables need them; the others do not).
 */
export function withNameHints(
  diagnostics: readonly Diagnostic[],
  policies: readonly ParsedPolicy[],
): Diagnostic[] {
  const byKey = new Map(policies.map((p) => [`${p.kind}/${p.name}`, p]));
  return diagnostics.map((d) => {
    if (d.code !== "PE_CEL_UNKNOWN_IDENT") return d;
    const policy = d.object && byKey.get(`${d.object.kind}/${d.object.name}`);
    const hint = hintFor(d, policy);
    if (hint === undefined) return d;
    return { ...d, detail: d.detail ? `${d.detail}\nhint: ${hint}` : `hint: ${hint}` };
  });
}
