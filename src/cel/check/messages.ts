/** The checker's error texts, as cel-go words them (checker/errors.go). */
import { type CelType, formatType } from "./types.ts";

/** Container names are always empty in Kubernetes' environments. */
export function undeclaredReference(name: string): string {
  return `undeclared reference to '${name}' (in container '')`;
}

/** checker/format.go formatFunctionDeclType without a result type. */
export function noMatchingOverload(name: string, args: readonly CelType[], isMember: boolean): string {
  const types = args.map(formatType);
  const signature = isMember ? `${types[0]}.(${types.slice(1).join(", ")})` : `(${types.join(", ")})`;
  return `found no matching overload for '${name}' applied to '${signature}'`;
}

export function typeMismatch(expected: CelType, actual: CelType): string {
  return `expected type '${formatType(expected)}' but found '${formatType(actual)}'`;
}

export function fieldTypeMismatch(field: string, expected: CelType, actual: CelType): string {
  return `expected type of field '${field}' is '${formatType(expected)}' but provided type is '${formatType(actual)}'`;
}

export function noFieldSelection(t: CelType): string {
  return `type '${formatType(t)}' does not support field selection`;
}

export function undefinedField(field: string): string {
  return `undefined field '${field}'`;
}

export function unexpectedFailedResolution(typeName: string): string {
  return `unexpected failed resolution of '${typeName}'`;
}

export function notAComprehensionRange(t: CelType): string {
  return `expression of type '${formatType(t)}' cannot be range of a comprehension (must be list, map, or dynamic)`;
}

export function notAMessageType(typeName: string): string {
  return `'${typeName}' is not a message type`;
}

export function notAType(typeName: string): string {
  return `'${typeName}' is not a type`;
}
