/**
 * The merge of an ApplyConfiguration into an object, as structured-merge-diff's TypedValue.Merge
 * does it with the rule that keeps the right-hand side (sigs.k8s.io/structured-merge-diff/v6
 * typed/merge.go), which is what a MutatingAdmissionPolicy applies (kubernetes staging/src/k8s.io/
 * apiserver/pkg/admission/plugin/policy/mutating/patch/smd.go ApplyStructuredMergeDiff):
 *
 * - a scalar, an atomic list, map or struct, and a list or map empty on both sides are leaves: the
 *   configuration's value replaces the object's (null included);
 * - a granular map or struct merges key by key: keys only the object has stay, keys only the
 *   configuration has are added, keys both have merge; a null configuration map keeps a non-empty
 *   object map as it is;
 * - a set or keyed list merges element by element, matched by value or by key (schema defaults
 *   filling keys left out), in the order visitListItems gives: the object's elements stay where
 *   they are unless the configuration lists shared elements in another order;
 * - a value whose shape changes under an untyped node is replaced.
 *
 * Both sides have been read as typed values first (merge-typed.ts), so the merge itself finds no
 * errors. It writes, as it goes, the JSON Patch operations that take the object to the result.
 * For a built-in kind the API server turns the result back into its Go type, where a struct field
 * set to null is the zero value and is omitted: `dropNulls` does the same to the result's fields.
 */
import type { ListNode, MapNode, MergeNode } from "../kube/schemas/index.ts";
import { setMember } from "../cel/index.ts";
import { itemKey, memberNode, partFor } from "./merge-typed.ts";
import { copyMap as copyOf, isObject, type JsonObject, jsonEqual, pointerSegment } from "./json-values.ts";
import type { JsonPatchOp } from "./types.ts";

export interface MergeOptions {
  /** Leave out struct fields the merge sets to null (built-in kinds, read back into Go types). */
  readonly dropNulls: boolean;
}

/** What a merged struct field becomes when it would be null and nulls are dropped. */
const DROPPED = Symbol("dropped");

/** A copy of a map the merge may add members to or delete members from. */
function copyMap(m: JsonObject): JsonObject {
  return copyOf(m, true);
}

/**
 * `v` as the result holds it when it is written whole: with nulls of struct fields left out when
 * the kind is read back into Go types. Copies only what it changes.
 */
function written(n: MergeNode, v: unknown, o: MergeOptions): unknown {
  if (!o.dropNulls || typeof v !== "object" || v === null) return v;
  const part = partFor(n, v);
  if (part.kind === "list" && Array.isArray(v)) {
    let out: unknown[] | undefined;
    const el = part.element();
    for (let i = 0; i < v.length; i++) {
      const w = written(el, v[i], o);
      if (w === v[i]) continue;
      out ??= [...v];
      out[i] = w;
    }
    return out ?? v;
  }
  if (part.kind !== "map" || !isObject(v)) return v;
  let out: JsonObject | undefined;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const field = part.field(k);
    if (field !== undefined && v[k] === null) {
      out ??= copyMap(v);
      delete out[k];
      continue;
    }
    const child = field ?? part.elements();
    if (child === undefined) continue;
    const w = written(child, v[k], o);
    if (w === v[k]) continue;
    out ??= copyMap(v);
    setMember<unknown>(out, k, w);
  }
  return out ?? v;
}

/** A leaf: the configuration's value, or the object's when they are equal (nothing to write). */
function leaf(
  n: MergeNode,
  l: unknown,
  r: unknown,
  path: string,
  ops: JsonPatchOp[],
  dropIfNull: boolean,
  o: MergeOptions,
): unknown {
  if (r === null && dropIfNull) return DROPPED;
  const w = written(n, r, o);
  if (jsonEqual(l, w)) return l;
  ops.push({ op: "replace", path, value: w });
  return w;
}

/**
 * The merge of `r` into `l` (both present) at `path`, with the operations for what changed.
 * DROPPED when the result is a struct field's null that is left out (the caller removes it).
 */
function mergeValue(
  n: MergeNode,
  l: unknown,
  r: unknown,
  path: string,
  ops: JsonPatchOp[],
  dropIfNull: boolean,
  o: MergeOptions,
): unknown {
  // With both sides present the part is the configuration's (merge.go handles the rhs atom on w).
  const part = partFor(n, r);
  if (part.kind === "scalar") return leaf(n, l, r, path, ops, dropIfNull, o);
  if (part.kind === "list") {
    const ll = Array.isArray(l) ? l : undefined;
    const rl = Array.isArray(r) ? r : undefined;
    const empty = (ll === undefined || ll.length === 0) && (rl === undefined || rl.length === 0);
    if (part.relationship === "atomic" || empty) return leaf(n, l, r, path, ops, dropIfNull, o);
    if (rl === undefined) return l;
    if (ll === undefined) return leaf(n, l, r, path, ops, dropIfNull, o);
    return mergeList(part, ll, rl, path, ops, o);
  }
  const lm = isObject(l) ? l : undefined;
  const rm = isObject(r) ? r : undefined;
  const empty = (lm === undefined || isEmpty(lm)) && (rm === undefined || isEmpty(rm));
  if (part.relationship === "atomic" || empty) return leaf(n, l, r, path, ops, dropIfNull, o);
  // A null configuration map merges nothing into the object's.
  if (rm === undefined) return l;
  // The object's value is not a map (null): what the configuration merges into nothing, whole.
  if (lm === undefined) return leaf(n, l, r, path, ops, dropIfNull, o);
  return mergeMap(part, lm, rm, path, ops, o);
}

function isEmpty(m: JsonObject): boolean {
  for (const k in m) if (Object.hasOwn(m, k)) return false;
  return true;
}

function mergeMap(
  map: MapNode,
  l: JsonObject,
  r: JsonObject,
  path: string,
  ops: JsonPatchOp[],
  o: MergeOptions,
): JsonObject {
  let out: JsonObject | undefined;
  for (const k in r) {
    if (!Object.hasOwn(r, k)) continue;
    const node = memberNode(map, k);
    // Validation has refused a key with no node; nothing is merged for it.
    if (node === undefined) continue;
    const dropIfNull = o.dropNulls && map.field(k) !== undefined;
    const p = `${path}/${pointerSegment(k)}`;
    const rv = r[k];
    if (!Object.hasOwn(l, k)) {
      if (rv === null && dropIfNull) continue;
      const w = written(node, rv, o);
      out ??= copyMap(l);
      setMember<unknown>(out, k, w);
      ops.push({ op: "add", path: p, value: w });
      continue;
    }
    const lv = l[k];
    const m = mergeValue(node, lv, rv, p, ops, dropIfNull, o);
    if (m === lv) continue;
    out ??= copyMap(l);
    if (m === DROPPED) {
      delete out[k];
      ops.push({ op: "remove", path: p });
    } else setMember<unknown>(out, k, m);
  }
  return out ?? l;
}

/** One element of the merged list: where in the object's list it was (-1: new), and its value. */
interface Placed {
  readonly from: number;
  readonly value: unknown;
}

/**
 * visitListItems: the elements of both lists in the order structured-merge-diff gives them. Walks
 * the object's list and the configuration's side by side; an object element the configuration
 * also has waits until the configuration reaches it, unless it is the next shared one.
 */
function mergeList(
  list: ListNode,
  l: unknown[],
  r: unknown[],
  path: string,
  ops: JsonPatchOp[],
  o: MergeOptions,
): unknown[] {
  const el = list.element();
  const lKeys = l.map((item) => itemKey(list, item) as string);
  const rKeys = r.map((item) => itemKey(list, item) as string);
  const lIndex = new Map<string, number>();
  lKeys.forEach((k, i) => {
    if (!lIndex.has(k)) lIndex.set(k, i);
  });
  const rIndex = new Map<string, number>();
  rKeys.forEach((k, i) => {
    if (!rIndex.has(k)) rIndex.set(k, i);
  });
  const shared = rKeys.filter((k) => lIndex.has(k));
  let nextShared: string | undefined = shared.shift();
  const merged = new Set<string>();
  const out: Placed[] = [];
  // Operations of merged elements address them where they are in the object's list; kept apart
  // until it is known that the object's elements keep their order.
  const itemOps: JsonPatchOp[] = [];
  const both = (key: string): Placed => {
    const li = lIndex.get(key);
    const rv = r[rIndex.get(key) as number];
    if (li === undefined) return { from: -1, value: written(el, rv, o) };
    return { from: li, value: mergeValue(el, l[li], rv, `${path}/${li}`, itemOps, false, o) };
  };
  let lI = 0;
  let rI = 0;
  while (lI < l.length || rI < r.length) {
    if (lI < l.length && rI < r.length) {
      const pe = lKeys[lI] as string;
      if (pe === rKeys[rI]) {
        merged.add(pe);
        out.push(both(pe));
        lI++;
        rI++;
        nextShared = shared.shift();
        continue;
      }
      // A shared element, but not the one to place in this round.
      if (rIndex.has(pe) && nextShared !== undefined && nextShared !== pe) {
        lI++;
        continue;
      }
    }
    if (lI < l.length) {
      const pe = lKeys[lI] as string;
      if (!rIndex.has(pe)) {
        out.push({ from: lI, value: l[lI] });
        lI++;
        continue;
      }
      if (merged.has(pe)) lI++;
    }
    if (rI < r.length) {
      const pe = rKeys[rI] as string;
      merged.add(pe);
      out.push(both(pe));
      rI++;
      if (nextShared !== undefined && nextShared === pe) nextShared = shared.shift();
    }
  }
  return placeList(l, out, itemOps, path, ops);
}

/**
 * The operations for a merged list. When the object's elements are all still there in their
 * order, each changed one is patched in place and each new one added where it lands; otherwise
 * (shared elements reordered) the list is replaced whole.
 */
function placeList(
  l: unknown[],
  out: readonly Placed[],
  itemOps: readonly JsonPatchOp[],
  path: string,
  ops: JsonPatchOp[],
): unknown[] {
  let next = 0;
  let inPlace = true;
  let changed = out.length !== l.length;
  for (const p of out) {
    if (p.from < 0) continue;
    if (p.from !== next) inPlace = false;
    next++;
    if (p.value !== l[p.from]) changed = true;
  }
  if (!inPlace || next !== l.length) changed = true;
  if (!changed) return l;
  const values = out.map((p) => p.value);
  if (!inPlace || next !== l.length) {
    ops.push({ op: "replace", path, value: values });
    return values;
  }
  for (const op of itemOps) ops.push(op);
  out.forEach((p, i) => {
    if (p.from < 0) ops.push({ op: "add", path: `${path}/${i}`, value: p.value });
  });
  return values;
}

/**
 * The merge of an ApplyConfiguration (already read as a typed value of `root`) into the object:
 * the result, sharing what did not change, and the JSON Patch from the object to it.
 */
export function mergeTyped(
  root: MergeNode,
  object: JsonObject,
  config: JsonObject,
  o: MergeOptions,
): { readonly object: JsonObject; readonly ops: JsonPatchOp[] } {
  const ops: JsonPatchOp[] = [];
  const merged = mergeValue(root, object, config, "", ops, false, o);
  // The root is a map on both sides; a leaf root (an atomic kind) is replaced whole.
  if (isObject(merged)) return { object: merged, ops };
  return { object, ops: [] };
}
