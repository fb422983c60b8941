/**
 * "Did you mean" for names in expressions. The CEL checker reports an unknown name in cel-go's own
 * words (`undeclared reference to 'variables.containres' (in container '')`), which stay as they
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

/** `spec.variables[2].expression` → 2. */
function variableIndex(path: string | undefined): number | undefined {
  const m = /^spec\.variables\[(\d+)\]\./.exec(path ?? "");
  return m ? Number(m[1]) : undefined;
}

function hintFor(d: Diagnostic, policy: ParsedPolicy): string | undefined {
  const name = UNDECLARED.exec(d.message)?.[1];
  if (name === undefined) return undefined;
  if (name.startsWith("variables.")) {
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
 * `policies` are the parsed policies the diagnostics' `object`s name.
 */
export function withNameHints(
  diagnostics: readonly Diagnostic[],
  policies: readonly ParsedPolicy[],
): Diagnostic[] {
  const byKey = new Map(policies.map((p) => [`${p.kind}/${p.name}`, p]));
  return diagnostics.map((d) => {
    if (d.code !== "PE_CEL_UNKNOWN_IDENT" || d.object === undefined) return d;
    const policy = byKey.get(`${d.object.kind}/${d.object.name}`);
    const hint = policy ? hintFor(d, policy) : undefined;
    if (hint === undefined) return d;
    return { ...d, detail: d.detail ? `${d.detail}\nhint: ${hint}` : `hint: ${hint}` };
  });
}
