/**
 * celgate's own limit on the size of a string, bytes, list or map an evaluation builds: a safety
 * limit beyond Kubernetes' cost model, which it does not replace. The model charges some builders
 * by their input, not by what they build (k8s.io/apiserver/pkg/cel/library/cost.go charges
 * `replace` ceil(size × 2 × 0.1) whatever the replacement; cel-go counts list concatenation as
 * O(1)), so an expression the API server accepts as cheap can build a string of hundreds of
 * millions of characters, more memory than a webhook's container has. Each builder that can grow
 * beyond its input checks the size of its result here before it builds it, in both tiers (they
 * share the library's implementations), and the evaluation fails with a CelError that the engine
 * handles by failurePolicy, as any run-time error.
 *
 * The limit is above anything a review can carry: the webhook reads request bodies of at most
 * about 7 MiB (adapters/server/http.ts BODY_LIMIT), so no string in it is longer and no list in it
 * has more elements, and a policy can still concatenate a few such values.
 */
import { CelError } from "./values.ts";

/** The most characters (UTF-16 code units), bytes, list elements or map entries a built value may have. */
export const MAX_BUILT_SIZE = 8 * 1024 * 1024;

/** Throws the size limit's error when a value of `size` units (`what`) would be over the limit. */
export function checkBuiltSize(size: number, what: "string" | "bytes" | "list" | "map"): void {
  if (size > MAX_BUILT_SIZE) throw builtSizeError(size, what);
}

function builtSizeError(size: number, what: "string" | "bytes" | "list" | "map"): CelError {
  const unit = { string: "characters", bytes: "bytes", list: "elements", map: "entries" }[what];
  return new CelError(
    `celgate's size limit: the expression would build a ${what} of ${size} ${unit}, over the limit of ${MAX_BUILT_SIZE} (a safety limit of celgate's own, beyond Kubernetes' cost model)`,
  );
}
