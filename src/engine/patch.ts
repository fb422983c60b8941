/** JSON Patch between two objects, for the webhook reply and the per-policy trace. */
import fastJsonPatch from "fast-json-patch";
import type { JsonPatchOp } from "./types.ts";

export function diffPatch(from: unknown, to: unknown): JsonPatchOp[] {
  return fastJsonPatch.compare(from as object, to as object) as JsonPatchOp[];
}
