/**
 * The types each kind of admission expression must have, and Kubernetes' error when it has
 * another: CompileCELExpression (admission/plugin/cel/compile.go) accepts an expression whose
 * checked type is exactly one of its accessor's ReturnTypes (ValidationCondition: bool;
 * MessageExpressionCondition: string; AuditAnnotationCondition: string or null; MatchCondition:
 * bool; Variable: any; ApplyConfigurationCondition: Object; JSONPatchCondition: list(JSONPatch)).
 * Exactly: `object.spec.paused` is dyn, so it is not a validation ("must evaluate to bool but got dyn").
 */
import { BOOL, type CelType, isExactType, listOf, NULL, objectType, STRING, typeString } from "./types.ts";

export type ExpressionKind =
  | "validation"
  | "messageExpression"
  | "auditAnnotation"
  | "matchCondition"
  | "variable"
  | "applyConfiguration"
  | "jsonPatch";

/** The accepted types, or `any` for variables (ReturnTypes AnyType and DynType). */
export const RESULT_TYPES: Readonly<Record<ExpressionKind, readonly CelType[] | "any">> = {
  validation: [BOOL],
  messageExpression: [STRING],
  auditAnnotation: [STRING, NULL],
  matchCondition: [BOOL],
  variable: "any",
  applyConfiguration: [objectType("Object")],
  jsonPatch: [listOf(objectType("JSONPatch"))],
};

/** Kubernetes' message when an expression's type is not accepted for its kind; undefined if it is. */
export function resultTypeIssue(kind: ExpressionKind, t: CelType): string | undefined {
  const accepted = RESULT_TYPES[kind];
  if (accepted === "any" || accepted.some((a) => isExactType(t, a))) return undefined;
  // Go's %v of a *cel.Type is its String(); of a slice of them, the strings in brackets.
  if (accepted.length === 1)
    return `must evaluate to ${typeString(accepted[0] as CelType)} but got ${typeString(t)}`;
  return `must evaluate to one of [${accepted.map(typeString).join(" ")}] but got ${typeString(t)}`;
}
