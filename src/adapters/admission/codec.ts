/**
 * The AdmissionReview wire format (admission.k8s.io/v1 and v1beta1): decoding what the API server
 * sends and encoding a reply it will accept. The API server rejects a reply whose apiVersion/kind
 * or uid differ from the request, or a validating reply that carries a patch; it drops warnings
 * with control characters and audit annotations whose `<webhook>/<key>` is not a qualified name.
 * Everything here exists to keep those rules in one place.
 */
import type { AdmissionDecision, JsonPatchOp } from "../../engine/types.ts";
import {
  type AdmissionRequest,
  type GroupVersionKind,
  type GroupVersionResource,
  isOperation,
  OPERATIONS,
  type UserInfo,
} from "../../request/types.ts";
import type { Operation } from "../../policy/types.ts";
import { createHash } from "node:crypto";
import { setMember } from "../../cel/index.ts";
import { stringifyJson } from "../../request/json-deep.ts";
import { err, ok, type Result } from "../../result.ts";

export const ADMISSION_V1 = "admission.k8s.io/v1";
export const ADMISSION_V1BETA1 = "admission.k8s.io/v1beta1";
export type AdmissionReviewVersion = typeof ADMISSION_V1 | typeof ADMISSION_V1BETA1;

export interface DecodedReview {
  readonly apiVersion: AdmissionReviewVersion;
  readonly request: AdmissionRequest;
}

/** A request body the webhook cannot answer; the server replies with HTTP 400 and `reason`. */
export interface ReviewError {
  readonly status: 400;
  readonly reason: string;
}

/** The API server's warning limits (apiserver/pkg/endpoints/filters/warning.go), in code points. */
export const MAX_WARNING_LENGTH = 256;
export const MAX_WARNINGS_TOTAL_LENGTH = 4096;
/** A denial message longer than this is cut; it matches the bound on an evaluated messageExpression. */
export const MAX_STATUS_MESSAGE_LENGTH = 5 * 1024;
/** The name part of a qualified name (the API server prefixes our keys with `<webhook name>/`). */
export const MAX_AUDIT_KEY_LENGTH = 63;

type JsonObject = Readonly<Record<string, unknown>>;

/** Thrown inside the decoder only; turned into a ReviewError at its boundary. */
class DecodeFailure extends Error {}

function fail(path: string, problem: string): never {
  throw new DecodeFailure(`${path}: ${problem}`);
}

/**
 * `path.field` (or `path` without a field), for a failure's message. The readers below take the
 * two apart and join them only when they fail: joining them for every field read would be a large
 * share of decoding a review.
 */
function at(path: string, field: string | undefined): string {
  return field === undefined ? path : `${path}.${field}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function expectObject(value: unknown, path: string): JsonObject {
  if (value === undefined || value === null) fail(path, "required");
  if (!isObject(value)) fail(path, `expected an object, got ${describe(value)}`);
  return value;
}

/** `null` for absent or null, else the value, which must be an object. */
function optionalObject(value: unknown, path: string, field?: string): JsonObject | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) fail(at(path, field), `expected an object or null, got ${describe(value)}`);
  return value;
}

function optionalString(value: unknown, path: string, field?: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") fail(at(path, field), `expected a string, got ${describe(value)}`);
  return value;
}

function requiredString(value: unknown, path: string, field?: string): string {
  const s = optionalString(value, path, field);
  if (s === undefined || s === "") fail(at(path, field), "required");
  return s;
}

function stringList(value: unknown, path: string, field?: string): readonly string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(at(path, field), `expected a list of strings, got ${describe(value)}`);
  value.forEach((item, i) => {
    if (typeof item !== "string")
      fail(`${at(path, field)}[${i}]`, `expected a string, got ${describe(item)}`);
  });
  return value as readonly string[];
}

function decodeGvk(value: unknown, path: string): GroupVersionKind {
  const o = expectObject(value, path);
  return {
    group: optionalString(o.group, path, "group") ?? "",
    version: requiredString(o.version, path, "version"),
    kind: requiredString(o.kind, path, "kind"),
  };
}

function decodeGvr(value: unknown, path: string): GroupVersionResource {
  const o = expectObject(value, path);
  return {
    group: optionalString(o.group, path, "group") ?? "",
    version: requiredString(o.version, path, "version"),
    resource: requiredString(o.resource, path, "resource"),
  };
}

function decodeUserInfo(value: unknown, path: string): UserInfo {
  if (value === undefined || value === null) return { username: "", groups: [] };
  const o = expectObject(value, path);
  const uid = optionalString(o.uid, path, "uid");
  let extra: Record<string, readonly string[]> | undefined;
  const rawExtra = optionalObject(o.extra, path, "extra");
  if (rawExtra !== null) {
    extra = {};
    for (const [k, v] of Object.entries(rawExtra))
      setMember(extra, k, stringList(v, `${path}.extra[${JSON.stringify(k)}]`));
  }
  const username = optionalString(o.username, path, "username") ?? "";
  // Key by key: conditional spreads are slow to build in V8, and this runs once per review.
  const user: { -readonly [K in keyof UserInfo]: UserInfo[K] } = {
    username,
    groups: stringList(o.groups, path, "groups"),
  };
  if (uid !== undefined) user.uid = uid;
  if (extra !== undefined) user.extra = extra;
  return user;
}

function decodeRequest(value: unknown): AdmissionRequest {
  const r = expectObject(value, "request");
  const uid = requiredString(r.uid, "request.uid");
  const kind = decodeGvk(r.kind, "request.kind");
  const resource = decodeGvr(r.resource, "request.resource");
  const subResource = optionalString(r.subResource, "request.subResource");
  const requestKind = r.requestKind == null ? undefined : decodeGvk(r.requestKind, "request.requestKind");
  const requestResource =
    r.requestResource == null ? undefined : decodeGvr(r.requestResource, "request.requestResource");
  const requestSubResource = optionalString(r.requestSubResource, "request.requestSubResource");
  const name = optionalString(r.name, "request.name") ?? "";
  const namespace = optionalString(r.namespace, "request.namespace") ?? "";
  const op = r.operation;
  if (op === undefined || op === null || op === "") fail("request.operation", "required");
  if (!isOperation(op)) {
    const got = typeof op === "string" ? JSON.stringify(op) : describe(op);
    fail("request.operation", `expected one of ${OPERATIONS.join(", ")}, got ${got}`);
  }
  const userInfo = decodeUserInfo(r.userInfo, "request.userInfo");
  const object = optionalObject(r.object, "request.object");
  const oldObject = optionalObject(r.oldObject, "request.oldObject");
  const options = optionalObject(r.options, "request.options");
  let dryRun = false;
  if (r.dryRun !== undefined && r.dryRun !== null) {
    if (typeof r.dryRun !== "boolean")
      fail("request.dryRun", `expected a boolean, got ${describe(r.dryRun)}`);
    dryRun = r.dryRun;
  }
  const out: { -readonly [K in keyof AdmissionRequest]: AdmissionRequest[K] } = {
    uid,
    kind,
    resource,
    name,
    namespace,
    operation: op as Operation,
    userInfo,
    object,
    oldObject,
    dryRun,
    options,
  };
  // Empty sub-resources are how Go spells "none"; dropping them keeps one spelling downstream.
  // (Assigned, not spread: this runs for every review, and each spread built a throwaway object.)
  if (subResource) out.subResource = subResource;
  if (requestKind !== undefined) out.requestKind = requestKind;
  if (requestResource !== undefined) out.requestResource = requestResource;
  if (requestSubResource) out.requestSubResource = requestSubResource;
  return out;
}

/**
 * Reads an already JSON-parsed AdmissionReview. Field names are case-sensitive and unknown fields
 * are ignored, as the API server's own decoder does.
 */
export function decodeAdmissionReview(body: unknown): Result<DecodedReview, ReviewError> {
  try {
    if (!isObject(body)) fail("body", `expected a JSON object, got ${describe(body)}`);
    const kind = body.kind;
    if (kind === undefined || kind === null || kind === "") fail("kind", "required");
    if (kind !== "AdmissionReview") {
      const got = typeof kind === "string" ? JSON.stringify(kind) : describe(kind);
      fail("kind", `expected "AdmissionReview", got ${got}`);
    }
    const apiVersion = body.apiVersion;
    if (apiVersion === undefined || apiVersion === null || apiVersion === "") fail("apiVersion", "required");
    if (apiVersion !== ADMISSION_V1 && apiVersion !== ADMISSION_V1BETA1) {
      const got = typeof apiVersion === "string" ? JSON.stringify(apiVersion) : describe(apiVersion);
      fail("apiVersion", `expected ${ADMISSION_V1} or ${ADMISSION_V1BETA1}, got ${got}`);
    }
    return ok({ apiVersion, request: decodeRequest(body.request) });
  } catch (e) {
    if (e instanceof DecodeFailure) return err({ status: 400, reason: e.message });
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

export interface AdmissionReviewStatus {
  readonly code: number;
  readonly reason?: string;
  readonly message?: string;
}

export interface AdmissionReviewResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionReviewStatus;
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  readonly patchType?: "JSONPatch";
  readonly patch?: string;
}

export interface AdmissionReviewReply {
  readonly apiVersion: AdmissionReviewVersion;
  readonly kind: "AdmissionReview";
  readonly response: AdmissionReviewResponse;
}

export interface EncodeOptions {
  /** Whether this reply answers a mutating webhook call; validating replies never carry a patch. */
  readonly mutating: boolean;
  readonly operation: Operation;
}

const LINE_BREAK = /\r\n|[\n\r\u0085\u2028\u2029]/g;
const TAB = /\t/g;
// C0 and C1 controls; the API server refuses to turn such a warning into a header and drops it.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** One line of well-formed text: line breaks and tabs become spaces, other controls go. */
export function singleLine(text: string): string {
  return text
    .replace(LONE_SURROGATE, "\ufffd")
    .replace(LINE_BREAK, " ")
    .replace(TAB, " ")
    .replace(CONTROL, "")
    .trim();
}

/** Cuts to at most `max` code points, never splitting a surrogate pair. */
function truncateCodePoints(text: string, max: number, marker = ""): string {
  const points = Array.from(text);
  if (points.length <= max) return text;
  const markerLength = Array.from(marker).length;
  return points.slice(0, Math.max(0, max - markerLength)).join("") + marker;
}

function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Warnings as the API server will pass them on: single-line, non-empty, each at most 256 code
 * points, no duplicates, and only as many as fit in 4096 code points in total (a prefix, in order).
 */
export function sanitizeWarnings(warnings: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const raw of warnings) {
    const text = truncateCodePoints(singleLine(raw), MAX_WARNING_LENGTH);
    if (text === "" || seen.has(text)) continue;
    const length = codePointLength(text);
    if (total + length > MAX_WARNINGS_TOTAL_LENGTH) break;
    seen.add(text);
    out.push(text);
    total += length;
  }
  return out;
}

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}

/**
 * Turns an engine audit-annotation key (`<policy>/<key>`) into the name part of a qualified name.
 * The API server stores it as `<webhook name>/<our key>` and drops keys with a second `/`, so the
 * slash becomes `_` — never part of a policy name, which is a DNS subdomain, so the split stays
 * readable. Characters a name part cannot hold become `-`; a key that is still too long, or
 * that collides with another, gets a hash of the original so distinct keys stay distinct.
 */
export function auditAnnotationKey(key: string): string {
  let name = key
    .replace(/\//g, "_")
    .replace(/[^-A-Za-z0-9_.]/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .replace(/[^A-Za-z0-9]+$/, "");
  if (name === "") return `annotation-${shortHash(key)}`;
  if (name.length > MAX_AUDIT_KEY_LENGTH) {
    const head = name.slice(0, MAX_AUDIT_KEY_LENGTH - 9).replace(/[^A-Za-z0-9]+$/, "");
    name = `${head}-${shortHash(key)}`;
  }
  return name;
}

export function sanitizeAuditAnnotations(
  annotations: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(annotations)) {
    let name = auditAnnotationKey(key);
    if (Object.hasOwn(out, name) && out[name] !== value) {
      const head = name.slice(0, MAX_AUDIT_KEY_LENGTH - 9).replace(/[^A-Za-z0-9]+$/, "");
      name = `${head}-${shortHash(key)}`;
    }
    out[name] = String(value);
  }
  return out;
}

/**
 * A denial's status with one-line text. Without a status the denial reads as 403 Forbidden; a code
 * outside 400–599 becomes 400, as the API server itself does with codes below 400.
 */
function encodeStatus(status: AdmissionDecision["status"]): AdmissionReviewStatus {
  const rawCode = status?.code ?? 403;
  const code = Number.isInteger(rawCode) && rawCode >= 400 && rawCode <= 599 ? rawCode : 400;
  const reason = singleLine(status?.reason ?? (status === undefined ? "Forbidden" : ""));
  const message = truncateCodePoints(singleLine(status?.message ?? ""), MAX_STATUS_MESSAGE_LENGTH, "…");
  const out: { -readonly [K in keyof AdmissionReviewStatus]: AdmissionReviewStatus[K] } = { code };
  if (reason !== "") out.reason = reason;
  if (message !== "") out.message = message;
  return out;
}

/** The JSON Patch array, base64 as the `patch` field wants it; only RFC 6902 members are kept. */
export function encodePatch(ops: readonly JsonPatchOp[]): string {
  const clean = ops.map((o) => ({
    op: o.op,
    path: o.path,
    ...(o.from !== undefined ? { from: o.from } : {}),
    ...("value" in o && o.op !== "remove" && o.op !== "move" && o.op !== "copy" ? { value: o.value } : {}),
  }));
  // stringifyJson: a value may nest past JSON.stringify's stack, or hold an int64 beyond 2^53 (a
  // bigint), written as its digits.
  return Buffer.from(stringifyJson(clean), "utf8").toString("base64");
}

/**
 * The reply body for one admission request, in the version it came in. A patch goes out only on an
 * allowed mutating reply with a non-empty patch for an operation other than DELETE (the API server
 * rejects patches from validating webhooks, and there is no object to patch on DELETE).
 */
export function encodeAdmissionReview(
  apiVersion: AdmissionReviewVersion,
  uid: string,
  decision: AdmissionDecision,
  opts: EncodeOptions,
): AdmissionReviewReply {
  const allowed = decision.allowed === true;
  const warnings = sanitizeWarnings(decision.warnings);
  const auditAnnotations = sanitizeAuditAnnotations(decision.auditAnnotations);
  const patch = decision.patch;
  const withPatch =
    allowed && opts.mutating && opts.operation !== "DELETE" && patch !== undefined && patch.length > 0;
  // Key by key rather than conditional spreads (slow to build in V8); once per reply, in the order
  // replies have always been written in.
  const response: { -readonly [K in keyof AdmissionReviewResponse]: AdmissionReviewResponse[K] } = {
    uid,
    allowed,
  };
  if (!allowed) response.status = encodeStatus(decision.status);
  if (warnings.length > 0) response.warnings = warnings;
  if (Object.keys(auditAnnotations).length > 0) response.auditAnnotations = auditAnnotations;
  if (withPatch) {
    response.patchType = "JSONPatch";
    response.patch = encodePatch(patch);
  }
  return { apiVersion, kind: "AdmissionReview", response };
}
