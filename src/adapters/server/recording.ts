/**
 * The format of a recorded review (`serve --record`, read back by `celgate replay`): one JSON object
 * a line, the AdmissionReview as received and the decision as answered, both redacted (redact.ts).
 * The decision is kept as the reply said it, with the patch decoded from base64 into its operations,
 * so that replay compares what the API server was told, operation by operation.
 */
import type { JsonPatchOp } from "../../engine/types.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import type { AdmissionReviewResponse, AdmissionReviewVersion } from "../admission/codec.ts";
import { redactPatch, redactRequest, redactText, type Sensitive, sensitiveOf } from "./redact.ts";

export const RECORD_API_VERSION = "celgate.dev/v1alpha1";
export const RECORD_KIND = "RecordedReview";

/** What a review was answered, as the API server read the reply. */
export interface RecordedDecision {
  readonly allowed: boolean;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly warnings: readonly string[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
  readonly patch: readonly JsonPatchOp[];
}

/** One line of a recording. */
export interface RecordedReview {
  readonly apiVersion: typeof RECORD_API_VERSION;
  readonly kind: typeof RECORD_KIND;
  /** When the answer was sent (RFC 3339). */
  readonly time: string;
  /** The route that answered: its phase and, on a split path, its failurePolicy. */
  readonly path: string;
  readonly review: {
    readonly apiVersion: AdmissionReviewVersion;
    readonly kind: "AdmissionReview";
    readonly request: AdmissionRequest;
  };
  readonly decision: RecordedDecision;
}

/** The reply's patch operations; none when it carries no patch. */
function patchOf(response: AdmissionReviewResponse): JsonPatchOp[] {
  if (response.patch === undefined) return [];
  const ops = JSON.parse(Buffer.from(response.patch, "base64").toString("utf8")) as unknown;
  return Array.isArray(ops) ? (ops as JsonPatchOp[]) : [];
}

/** A reply as a decision, with every sensitive value of `s` replaced (redact.ts). */
export function decisionOf(response: AdmissionReviewResponse, s: Sensitive): RecordedDecision {
  const out: { -readonly [K in keyof RecordedDecision]: RecordedDecision[K] } = {
    allowed: response.allowed,
    warnings: (response.warnings ?? []).map((w) => redactText(w, s)),
    auditAnnotations: Object.fromEntries(
      Object.entries(response.auditAnnotations ?? {}).map(([k, v]) => [k, redactText(v, s)]),
    ),
    patch: redactPatch(patchOf(response), s),
  };
  if (response.status !== undefined) {
    out.code = response.status.code;
    if (response.status.reason !== undefined) out.reason = response.status.reason;
    if (response.status.message !== undefined) out.message = redactText(response.status.message, s);
  }
  return out;
}

/** The line a review and its answer are recorded as (without the newline). */
export function recordLine(
  time: Date,
  path: string,
  apiVersion: AdmissionReviewVersion,
  request: AdmissionRequest,
  response: AdmissionReviewResponse,
): string {
  const s = sensitiveOf(request);
  const line: RecordedReview = {
    apiVersion: RECORD_API_VERSION,
    kind: RECORD_KIND,
    time: time.toISOString(),
    path,
    review: { apiVersion, kind: "AdmissionReview", request: redactRequest(request, s) },
    decision: decisionOf(response, s),
  };
  return JSON.stringify(line);
}
