/**
 * The API server's defaults, applied again to an object a mutation changed. After each mutation of
 * a MutatingAdmissionPolicy, and after each mutating webhook's patch, it runs the object defaulter on
 * the result (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating/
 * dispatcher.go `dispatchOne`, and plugin/webhook/mutating/dispatcher.go `callAttrMutatingHook`:
 * `o.GetObjectDefaulter().Default(...)`), so a container a mutation adds gets its imagePullPolicy,
 * and the next mutation, and the validating policies, see it.
 *
 * The defaults come as JSON Patch operations, so the patch still takes the request's object to the
 * one the policies saw: a field in an object that exists is added or replaced, and a field whose
 * parent the defaults made is added with its parent (one `add` of the finished parent).
 */
import { applyDefaultsWithPointers, hasDefaults } from "../kube/defaults/index.ts";
import { cloneJson } from "../request/json-deep.ts";
import type { JsonPatchOp } from "./types.ts";

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function unescapeToken(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Whether the value at `pointer` exists in `doc`; and if not, the pointer to the first part missing. */
function firstMissing(doc: unknown, pointer: string): string | undefined {
  let node = doc;
  let at = "";
  for (const segment of pointer.split("/").slice(1)) {
    at = `${at}/${segment}`;
    const key = unescapeToken(segment);
    if (Array.isArray(node)) {
      const i = Number(key);
      if (!Number.isInteger(i) || i < 0 || i >= node.length) return at;
      node = node[i];
    } else if (isObject(node) && Object.hasOwn(node, key)) {
      node = node[key];
    } else return at;
  }
  return undefined;
}

function valueAt(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const segment of pointer.split("/").slice(1)) {
    const key = unescapeToken(segment);
    node = Array.isArray(node) ? node[Number(key)] : isObject(node) ? node[key] : undefined;
  }
  return node;
}

/**
 * `object` with the API server's defaults applied again, and the operations that did it; undefined
 * when its kind has none to apply or none changed it. `object` itself is left as it is: a mutation's
 * result shares what it did not change with the request's object.
 */
export function defaultAfterMutation(
  object: JsonObject,
): { readonly object: JsonObject; readonly ops: JsonPatchOp[] } | undefined {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== "string" || typeof kind !== "string" || !hasDefaults(apiVersion, kind))
    return undefined;
  const after = cloneJson(object);
  const { fields, pointers } = applyDefaultsWithPointers(after);
  if (fields.length === 0) return undefined;
  const ops: JsonPatchOp[] = [];
  const made = new Set<string>();
  fields.forEach((field, i) => {
    const pointer = pointers[i] as string;
    if (field.removed) {
      ops.push({ op: "remove", path: pointer });
      return;
    }
    const missing = firstMissing(object, pointer);
    if (missing === undefined) {
      ops.push({ op: "replace", path: pointer, value: field.value });
      return;
    }
    // The defaults made a parent on the way: add it once, finished (its value after every default).
    for (const m of made) if (missing === m || missing.startsWith(`${m}/`)) return;
    made.add(missing);
    ops.push({ op: "add", path: missing, value: cloneJson(valueAt(after, missing)) });
  });
  return { object: after, ops };
}
