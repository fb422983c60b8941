/**
 * Type unification as cel-go's checker does it (checker/types.go, checker/mapping.go): a mapping
 * from type parameters to the types they stand for, assignability that binds parameters as it
 * goes, the most general of two unifiable types, and substitution.
 *
 * cel-go copies the whole mapping before each assignability test and keeps the copy on success.
 * Here the mapping records what each test changed and undoes it on failure, which gives the same
 * results without a copy per test, so checking stays linear in the size of the expression.
 */
import {
  type CelType,
  DYN,
  isAssignableType,
  isDyn,
  isDynOrError,
  isExactType,
  listOf,
  mapOf,
  NULL,
  opaque,
  typeOf,
} from "./types.ts";

/** Type parameter substitutions, keyed by parameter name as cel-go keys them (FormatCELType). */
export class Mapping {
  private readonly map = new Map<string, CelType>();
  private readonly trail: [string, CelType | undefined][] = [];

  find(t: CelType): CelType | undefined {
    // Only type parameters are ever keys (isValidTypeSubstitution adds nothing else).
    return t.kind === "typeParam" ? this.map.get(t.name) : undefined;
  }

  add(from: CelType, to: CelType): void {
    this.trail.push([from.name, this.map.get(from.name)]);
    this.map.set(from.name, to);
  }

  mark(): number {
    return this.trail.length;
  }

  rollback(mark: number): void {
    while (this.trail.length > mark) {
      const [key, previous] = this.trail.pop() as [string, CelType | undefined];
      if (previous === undefined) this.map.delete(key);
      else this.map.set(key, previous);
    }
  }
}

/** Whether t1 is equal to or less specific than t2 (matches it through dyn or a type parameter). */
function isEqualOrLessSpecific(t1: CelType, t2: CelType): boolean {
  if (isDyn(t1) || t1.kind === "typeParam") return true;
  if (isDyn(t2) || t2.kind === "typeParam") return false;
  if (t1.kind !== t2.kind) return false;
  switch (t1.kind) {
    case "opaque":
      return (
        t1.name === t2.name &&
        t1.params.length === t2.params.length &&
        t1.params.every((p, i) => isEqualOrLessSpecific(p, t2.params[i] as CelType))
      );
    case "list":
      return isEqualOrLessSpecific(t1.params[0] as CelType, t2.params[0] as CelType);
    case "map":
      return (
        isEqualOrLessSpecific(t1.params[0] as CelType, t2.params[0] as CelType) &&
        isEqualOrLessSpecific(t1.params[1] as CelType, t2.params[1] as CelType)
      );
    case "type":
      return true;
    default:
      return isExactType(t1, t2);
  }
}

/** The more general of two types known to unify. */
export function mostGeneral(t1: CelType, t2: CelType): CelType {
  return isEqualOrLessSpecific(t1, t2) ? t1 : t2;
}

/** The occurs check: whether `t` does not appear in `within`, directly or through substitutions. */
function notReferencedIn(m: Mapping, t: CelType, within: CelType): boolean {
  if (isExactType(t, within)) return false;
  switch (within.kind) {
    case "typeParam": {
      const sub = m.find(within);
      return sub === undefined ? true : notReferencedIn(m, t, sub);
    }
    case "opaque":
    case "list":
    case "map":
    case "type":
      return within.params.every((p) => notReferencedIn(m, t, p));
    default:
      return true;
  }
}

/**
 * Whether t2 (or what it stands for) is a valid substitution for t1, and whether t2 has a
 * substitution already. May bind t2 to t1, or widen its binding to the more general type.
 */
function isValidTypeSubstitution(m: Mapping, t1: CelType, t2: CelType): [boolean, boolean] {
  if (t1.kind === t2.kind && isExactType(t1, t2)) return [true, true];
  const sub = m.find(t2);
  if (sub !== undefined) {
    if (t1.kind === sub.kind && isExactType(t1, sub)) return [true, true];
    if (internalIsAssignable(m, t1, sub)) {
      const widened = mostGeneral(t1, sub);
      if (notReferencedIn(m, t2, widened)) m.add(t2, widened);
      return [true, true];
    }
    return [false, true];
  }
  if (notReferencedIn(m, t2, t1)) {
    m.add(t2, t1);
    return [true, false];
  }
  return [false, false];
}

/** Legacy nullability: message, opaque, any, duration and timestamp values may be compared with null. */
function isLegacyNullable(t: CelType): boolean {
  switch (t.kind) {
    case "opaque":
    case "struct":
    case "any":
    case "duration":
    case "timestamp":
      return true;
    default:
      return false;
  }
}

function internalIsAssignableNull(t: CelType): boolean {
  return isLegacyNullable(t) || isAssignableType(t, NULL);
}

function internalIsAssignableList(m: Mapping, l1: readonly CelType[], l2: readonly CelType[]): boolean {
  if (l1.length !== l2.length) return false;
  for (let i = 0; i < l1.length; i++) {
    if (!internalIsAssignable(m, l1[i] as CelType, l2[i] as CelType)) return false;
  }
  return true;
}

/** Whether a value of type t1 may stand where t2 is expected, binding type parameters on the way. */
function internalIsAssignable(m: Mapping, t1: CelType, t2: CelType): boolean {
  if (t2.kind === "typeParam") {
    const [valid, hasSub] = isValidTypeSubstitution(m, t1, t2);
    if (valid) return true;
    if (hasSub) return false;
  }
  if (t1.kind === "typeParam") return isValidTypeSubstitution(m, t2, t1)[0];
  if (isDynOrError(t1) || isDynOrError(t2)) return true;
  if (t1.kind === "null") return internalIsAssignableNull(t2);
  if (t2.kind === "null") return internalIsAssignableNull(t1);
  switch (t1.kind) {
    case "bool":
    case "bytes":
    case "double":
    case "int":
    case "string":
    case "uint":
    case "any":
    case "duration":
    case "timestamp":
    case "struct":
      return isAssignableType(t2, t1);
    case "type":
      return t2.kind === "type";
    case "opaque":
    case "list":
    case "map":
      return t1.kind === t2.kind && t1.name === t2.name && internalIsAssignableList(m, t1.params, t2.params);
    default:
      return false;
  }
}

/** isAssignable: on success the mapping keeps the bindings made, on failure it is left as it was. */
export function isAssignable(m: Mapping, t1: CelType, t2: CelType): boolean {
  const mark = m.mark();
  if (internalIsAssignable(m, t1, t2)) return true;
  m.rollback(mark);
  return false;
}

export function isAssignableList(m: Mapping, l1: readonly CelType[], l2: readonly CelType[]): boolean {
  const mark = m.mark();
  if (internalIsAssignableList(m, l1, l2)) return true;
  m.rollback(mark);
  return false;
}

/** Replaces bound type parameters by their bindings; unbound ones by dyn when `paramToDyn`. */
export function substitute(m: Mapping, t: CelType, paramToDyn: boolean): CelType {
  const sub = m.find(t);
  if (sub !== undefined) return substitute(m, sub, paramToDyn);
  if (paramToDyn && t.kind === "typeParam") return DYN;
  if (t.params.length === 0) return t;
  switch (t.kind) {
    case "opaque":
      return opaque(t.name, ...t.params.map((p) => substitute(m, p, paramToDyn)));
    case "list":
      return listOf(substitute(m, t.params[0] as CelType, paramToDyn));
    case "map":
      return mapOf(
        substitute(m, t.params[0] as CelType, paramToDyn),
        substitute(m, t.params[1] as CelType, paramToDyn),
      );
    case "type":
      return typeOf(substitute(m, t.params[0] as CelType, paramToDyn));
    default:
      return t;
  }
}

/** Replaces named type parameters (an overload's) by the given types: instantiation with fresh variables. */
export function instantiate(t: CelType, fresh: ReadonlyMap<string, CelType>): CelType {
  if (t.kind === "typeParam") return fresh.get(t.name) ?? t;
  if (t.params.length === 0) return t;
  const params = t.params.map((p) => instantiate(p, fresh));
  return { ...t, params };
}
