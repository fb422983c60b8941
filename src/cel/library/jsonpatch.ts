/**
 * Kubernetes' JSON Patch helper for MutatingAdmissionPolicy: `jsonpatch.escapeKey` escapes a key for
 * use as one segment of a JSON Pointer (RFC 6901), so `'k8s.io/my~label'` becomes `k8s.io~1my~0label`.
 */
import { fn, globalFn, type Library } from "./types.ts";

/** Escapes `~` before `/` so that the `~` introduced by `~1` is not escaped again. */
export function escapeJsonPointerKey(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

export const jsonpatchLibrary: Library = {
  name: "kubernetes.jsonpatch",
  availability: "kubernetes",
  functions: [
    fn(
      "jsonpatch.escapeKey",
      globalFn("string_jsonpatch_escapeKey_string", ["string"], "string", escapeJsonPointerKey),
    ),
  ],
};
