/**
 * The webhook's JSON Patch, built from what the mutations did rather than by diffing objects.
 *
 * Mutations report their own operations (a JSONPatch mutation its effective operations, an
 * ApplyConfiguration merge the operations it made). Appended one after another they already take
 * the request's object to the result. Appending also folds an operation into an earlier `add` or
 * `replace` of a map that contains its path, so `add /spec/securityContext {}` followed by
 * `add /spec/securityContext/runAsNonRoot true` reads as one `add` of the finished map, and
 * `add /spec/tolerations []` then `add /spec/tolerations/- {...}` as one `add` of the list: the form a
 * person would write in a test's expected patch.
 */
import { isJsonObject } from "../yaml/json-numbers.ts";
import type { JsonPatchOp } from "./types.ts";

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return isJsonObject(v);
}

function unescapeToken(segment: string): string {
  return segment.includes("~") ? segment.replace(/~1/g, "/").replace(/~0/g, "~") : segment;
}

/**
 * The map or list at `pointer` when every container on the way is a map; else undefined. Folding
 * is only safe through maps: an index into a list on the way can shift between two operations.
 */
function containerAt(doc: JsonObject, pointer: string): JsonObject | unknown[] | undefined {
  let node: unknown = doc;
  for (const segment of pointer.split("/").slice(1)) {
    if (!isObject(node)) return undefined;
    const key = unescapeToken(segment);
    node = Object.hasOwn(node, key) ? node[key] : undefined;
  }
  return isObject(node) || Array.isArray(node) ? node : undefined;
}

/** The earlier add/replace of a map or list whose path contains `path`, if folding into it is safe. */
function foldTarget(patch: readonly JsonPatchOp[], path: string, doc: JsonObject): number {
  for (let i = patch.length - 1; i >= 0; i--) {
    const e = patch[i] as JsonPatchOp;
    // move and copy read other paths at their point in the sequence; folding past one could change what they read.
    if (e.op === "move" || e.op === "copy") return -1;
    if (!path.startsWith(`${e.path}/`)) continue;
    if ((e.op === "add" || e.op === "replace") && typeof e.value === "object" && e.value !== null)
      return containerAt(doc, e.path) ? i : -1;
    return -1;
  }
  return -1;
}

/**
 * Appends `ops` (applied in order, giving `after`) to `patch`. Never changes an operation object
 * already in `patch`: a folded one is replaced by a new object, as per-policy traces share them.
 */
export function appendPatch(patch: JsonPatchOp[], ops: readonly JsonPatchOp[], after: JsonObject): void {
  // A fold takes its value from `after`, the state after the whole batch; a move or copy in the batch
  // reads an earlier state, so such a batch is appended as it is.
  const fold = !ops.some((op) => op.op === "move" || op.op === "copy");
  for (const op of ops) {
    if (fold && op.op !== "test") {
      const i = foldTarget(patch, op.path, after);
      if (i >= 0) {
        const target = patch[i] as JsonPatchOp;
        patch[i] = { op: target.op, path: target.path, value: containerAt(after, target.path) };
        continue;
      }
    }
    patch.push(op);
  }
}
