/**
 * Applies one mutation's result to the working object as a MutatingAdmissionPolicy does (kubernetes
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/):
 *
 * - JSONPatch (json_patch.go): the operations as gopkg.in/evanphx/json-patch.v4 applies them
 *   (json-patch.ts); a failed `test` leaves the object as it was; for a built-in kind the result
 *   must decode into its Go type (decode-check.ts), or the request fails with an InternalError,
 *   whatever the failurePolicy, as upstream's strict decoding does.
 * - ApplyConfiguration (smd.go): the configuration and the object are read as typed values of the
 *   kind's schema (merge-typed.ts), a configuration that sets an atomic map, struct or list is
 *   refused, and the two merge as structured-merge-diff merges them (merge-apply.ts). A kind
 *   without a known schema merges as SMD deduces untyped values (maps granular, lists atomic),
 *   with nothing checked or refused.
 *
 * Either way the mutation reports the JSON Patch operations it made, which the webhook's patch is
 * built from (patch.ts).
 */
import { type CelValue, toJson } from "../cel/index.ts";
import { deducedMergeSchema } from "../kube/schemas/index.ts";
import type { PatchType } from "../policy/types.ts";
import { err, ok, type Result } from "../result.ts";
import { decodeError } from "./decode-check.ts";
import { applyJsonPatch, type PatchOperation } from "./json-patch.ts";
import { isObject, type JsonObject } from "./json-values.ts";
import type { KindMerge } from "./kind-schemas.ts";
import { mergeTyped } from "./merge-apply.ts";
import { atomicPaths, typedErrors, typedErrorsText } from "./merge-typed.ts";
import type { JsonPatchOp } from "./types.ts";

export { jsonEqual, pointerSegment } from "./json-values.ts";

const DEDUCED_ROOT = deducedMergeSchema();

/** What one mutation did: the object after it, and the JSON Patch from the object before it. */
export interface AppliedMutation {
  readonly object: JsonObject;
  readonly ops: readonly JsonPatchOp[];
}

/**
 * Why a mutation could not apply. `runtime` errors are the policy's, decided by its failurePolicy;
 * `internal` is upstream's InternalError (a JSON-patched object that no longer decodes), which
 * fails the request whatever the failurePolicy says.
 */
export interface MutationFailure {
  readonly kind: "runtime" | "internal";
  readonly message: string;
}

function failure(message: string, kind: MutationFailure["kind"] = "runtime"): Result<never, MutationFailure> {
  return err({ kind, message });
}

/**
 * The expression's list as the operations json_patch.go builds from it: `op` and `path` always
 * (an unset path is ""), `from` only when non-empty, `value` only when set.
 */
function toPatchOps(value: unknown): Result<PatchOperation[], MutationFailure> {
  if (!Array.isArray(value))
    return failure(`JSONPatch mutation must evaluate to a list of JSONPatch, got ${typeof value}`);
  const ops: PatchOperation[] = [];
  for (let i = 0; i < value.length; i++) {
    const raw: unknown = value[i];
    if (!isObject(raw)) return failure(`JSONPatch[${i}] is not a JSONPatch object`);
    const op = raw.op;
    if (op !== undefined && typeof op !== "string") return failure(`JSONPatch[${i}].op must be a string`);
    // Members assigned in this order give the same key order (op, path, from, value) in the webhook's patch.
    const entry: { op: string; path: string; from?: string; value?: unknown } = {
      op: op ?? "",
      path: typeof raw.path === "string" ? raw.path : "",
    };
    if (typeof raw.from === "string" && raw.from !== "") entry.from = raw.from;
    if ("value" in raw) entry.value = raw.value;
    ops.push(entry);
  }
  return ok(ops);
}

function applyPatch(working: JsonObject, value: unknown, kind: KindMerge | undefined) {
  const ops = toPatchOps(value);
  if (!ops.ok) return ops;
  const out = applyJsonPatch(working, ops.value);
  if (out.kind === "error") return failure(`JSON Patch: ${out.message}`);
  // A failed `test` leaves the object unpatched without an error, as in Kubernetes.
  if (out.kind === "test-failed") return ok({ object: working, ops: [] });
  if (kind?.schema?.origin === "builtin" && out.writes.length > 0) {
    const decode = decodeError(kind.schema, out.writes);
    if (decode !== undefined) return failure(`Internal error occurred: ${decode}`, "internal");
  }
  return ok({ object: out.object, ops: out.ops });
}

/**
 * Objects (and the nodes they were read as) known to be typed values: the object a request brings
 * is read once, and what a merge makes of typed values is typed.
 */
const typedAs = new WeakMap<object, KindMerge["root"]>();

function liveErrors(root: KindMerge["root"], object: JsonObject): string | undefined {
  if (typedAs.get(object) === root) return undefined;
  const errs = typedErrors(root, object, true);
  if (errs.length > 0) return typedErrorsText(errs);
  typedAs.set(object, root);
  return undefined;
}

/** smd.go ApplyStructuredMergeDiff, with its error texts. */
function applyConfiguration(working: JsonObject, value: JsonObject, kind: KindMerge | undefined) {
  // The configuration takes the object's apiVersion and kind (SetGroupVersionKind), so it never changes them.
  const config: JsonObject = { ...value };
  if (typeof working.apiVersion === "string") config.apiVersion = working.apiVersion;
  if (typeof working.kind === "string") config.kind = working.kind;
  const schema = kind?.schema;
  if (kind === undefined || schema === undefined) {
    return ok(mergeTyped(kind?.root ?? DEDUCED_ROOT, working, config, { dropNulls: false }));
  }
  const root = kind.root;
  const configErrors = typedErrors(root, config);
  if (configErrors.length > 0)
    return failure(
      `error applying patch: failed to convert patch object to typed object: ${typedErrorsText(configErrors)}`,
    );
  const atomics = atomicPaths(root, config);
  if (atomics.length > 0)
    return failure(
      `error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(", ")}`,
    );
  const live = liveErrors(root, working);
  if (live !== undefined)
    return failure(`error applying patch: failed to convert original object to typed object: ${live}`);
  const merged = mergeTyped(root, working, config, { dropNulls: schema.origin === "builtin" });
  typedAs.set(merged.object, root);
  return ok(merged);
}

/**
 * Applies one mutation result to the working object of the kind `kind` describes (undefined: a
 * kind without a known schema). Never throws; failures come back as values.
 */
export function applyMutation(
  working: JsonObject,
  patchType: PatchType,
  result: CelValue,
  kind?: KindMerge,
): Result<AppliedMutation, MutationFailure> {
  // A JSONPatch value is written as cel-go writes a JSON value (an int beyond 2^53 as a string);
  // an ApplyConfiguration's Object keeps its int64s (patch/json_patch.go, patch/smd.go).
  const value = toJson(result, { exactInts: patchType === "ApplyConfiguration" });
  if (patchType === "ApplyConfiguration") {
    if (!isObject(value))
      return failure(
        `ApplyConfiguration mutation must evaluate to an Object, got ${Array.isArray(value) ? "list" : typeof value}`,
      );
    return applyConfiguration(working, value, kind);
  }
  return applyPatch(working, value, kind);
}
