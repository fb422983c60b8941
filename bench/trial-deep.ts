/**
 * The trial's deep-nesting reviews (issue 37 item 1): the ordinary Pod, updated, with an unknown field
 * holding a list nested 40 deep (took 2^40 steps when each level was converted twice), one nested
 * as deep as the API server's decoder allows (10,000 levels in the object), and one a level past it,
 * which no API server sends and which must get a 400. The first two carry the list in both the object
 * and the old object, so the bundled policies' `object.spec != oldObject.spec` compares it.
 */
import { podReview } from "./review.ts";

const PLACEHOLDER = "__trial_deep__";

/** A list nested `depth` levels, as JSON text (JSON.stringify itself recurses). */
function nestedList(depth: number): string {
  return `${"[".repeat(depth - 1)}[1]${",1]".repeat(depth - 1)}`;
}

/** The ordinary Pod as an UPDATE whose object and old object hold `spec.deep`: a list `depth` levels deep within the object. */
export function deepPodReview(depth: number): string {
  const review = podReview() as { request: Record<string, unknown> };
  const object = review.request.object as { spec: Record<string, unknown> };
  object.spec.deep = PLACEHOLDER;
  review.request.operation = "UPDATE";
  review.request.oldObject = object;
  // Pod → spec → deep: the list starts at the object's third level.
  return JSON.stringify(review).replaceAll(`"${PLACEHOLDER}"`, nestedList(depth - 2));
}

/** Depths within the object: the fault's 40, the decoder's limit, and one past it. */
export const DEEP_DEPTHS = [40, 10_000, 10_001] as const;
