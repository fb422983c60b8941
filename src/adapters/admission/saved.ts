/**
 * A saved AdmissionReview, given to `eval -r`, a test case's `reviewFile` or the REPL's `:review`:
 * decoded exactly as the webhook decodes a review body, so a review `serve` would refuse is refused
 * with the same reason.
 */
import type { AdmissionRequest } from "../../request/types.ts";
import { err, ok, type Result } from "../../result.ts";
import { decodeAdmissionReview } from "./codec.ts";

/** The review's request, as `serve` would evaluate it; or why `serve` would answer 400. */
export function decodeSavedReview(body: unknown): Result<AdmissionRequest, string> {
  const decoded = decodeAdmissionReview(body);
  return decoded.ok
    ? ok(decoded.value.request)
    : err(`an AdmissionReview that serve refuses (HTTP 400): ${decoded.error.reason}`);
}
