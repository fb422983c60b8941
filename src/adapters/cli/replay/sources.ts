/**
 * What `celgate replay` reads, one review at a time: files of JSON lines (`.jsonl`, `.log`) are
 * read line by line, so a recording of any length costs the memory of one line; YAML and JSON
 * files (`.yaml`, `.yml`, `.json`) are read whole, one file at a time, as `eval -r` reads them.
 * Each line or document is a recorded review (`serve --record`), an AdmissionReview, an audit event
 * or event list (audit.ts), or, in a YAML or JSON file, a plain resource admitted as a CREATE as
 * `eval -r` admits it. Anything else is a problem named by file:line, and reading goes on.
 */
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { buildRequest, expandLists, resourceRef } from "../../../engine/request.ts";
import type { KindScopes } from "../../../kube/scope.ts";
import { DEFAULT_USER, type AdmissionRequest } from "../../../request/types.ts";
import { type AdmissionReviewVersion, decodeAdmissionReview } from "../../admission/codec.ts";
import { isJsonObject, readDocuments } from "../../input/documents.ts";
import { type RecordedDecision, RECORD_KIND } from "../../server/recording.ts";
import { REVIEW_PATHS } from "../../server/review.ts";
import { AuditReader, isAuditEvent } from "./audit.ts";

/** One review to replay. */
export interface ReplayItem {
  /** file:line, or file (document N) */
  readonly where: string;
  /** The webhook path that answered it (a recording), which fixes its phase; absent: the whole chain. */
  readonly path?: string;
  readonly apiVersion: AdmissionReviewVersion;
  readonly request: AdmissionRequest;
  /** The answer recorded with it (a recording). */
  readonly recorded?: RecordedDecision;
}

export type SourceEvent =
  | { readonly kind: "item"; readonly item: ReplayItem }
  | { readonly kind: "skip"; readonly where: string; readonly reason: string }
  | { readonly kind: "problem"; readonly where: string; readonly message: string };

const LINE_FILES = /\.(jsonl|log)$/;
const DOCUMENT_FILES = /\.(ya?ml|json)$/;

/** The files a path names: itself, or a directory's readable files, recursively, in sorted order. */
async function* filesOf(path: string): AsyncGenerator<SourceEvent | string> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (e) {
    yield { kind: "problem", where: path, message: `cannot read: ${(e as Error).message}` };
    return;
  }
  if (!info.isDirectory()) {
    yield path;
    return;
  }
  const names = (await readdir(path)).filter((n) => !n.startsWith(".")).sort();
  for (const n of names) {
    const full = join(path, n);
    const s = await stat(full);
    if (s.isDirectory()) yield* filesOf(full);
    else if (LINE_FILES.test(n) || DOCUMENT_FILES.test(n)) yield full;
  }
}

/** Every review of the paths, in order. */
export async function* readSources(
  paths: readonly string[],
  scopes: KindScopes,
): AsyncGenerator<SourceEvent> {
  const audit = new AuditReader(scopes);
  for (const p of paths)
    for await (const f of filesOf(p)) {
      if (typeof f !== "string") yield f;
      else if (LINE_FILES.test(f) || !DOCUMENT_FILES.test(f)) yield* readLines(f, audit, scopes);
      else yield* readDocumentFile(f, audit, scopes);
    }
}

async function* readLines(file: string, audit: AuditReader, scopes: KindScopes): AsyncGenerator<SourceEvent> {
  const lines = createInterface({
    input: createReadStream(file, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      if (line.trim() === "") continue;
      const where = `${file}:${n}`;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (e) {
        yield { kind: "problem", where, message: `not a JSON line: ${(e as Error).message}` };
        continue;
      }
      yield* fromValue(value, where, audit, scopes, false);
    }
  } catch (e) {
    yield { kind: "problem", where: `${file}:${n + 1}`, message: `cannot read: ${(e as Error).message}` };
  }
}

async function* readDocumentFile(
  file: string,
  audit: AuditReader,
  scopes: KindScopes,
): AsyncGenerator<SourceEvent> {
  const docs = await readDocuments(file);
  if (!docs.ok) {
    yield { kind: "problem", where: file, message: docs.error };
    return;
  }
  for (const doc of docs.value) {
    const where = docs.value.length > 1 ? `${file} (document ${doc.index})` : file;
    yield* fromValue(doc.value, where, audit, scopes, true);
  }
}

/** One line's or document's reviews. `resources`: a plain object is a resource to CREATE (eval -r). */
function* fromValue(
  value: unknown,
  where: string,
  audit: AuditReader,
  scopes: KindScopes,
  resources: boolean,
): Generator<SourceEvent> {
  if (!isJsonObject(value)) {
    yield { kind: "problem", where, message: "not an object" };
    return;
  }
  const kind = value.kind;
  if (kind === RECORD_KIND) {
    yield recorded(value, where);
    return;
  }
  if (value.kind === "AdmissionReview") {
    const decoded = decodeAdmissionReview(value);
    yield decoded.ok
      ? {
          kind: "item",
          item: { where, apiVersion: decoded.value.apiVersion, request: decoded.value.request },
        }
      : {
          kind: "problem",
          where,
          message: `an AdmissionReview that serve refuses (HTTP 400): ${decoded.error.reason}`,
        };
    return;
  }
  if (value.kind === "EventList" && Array.isArray(value.items)) {
    for (const [i, e] of value.items.entries()) yield fromAudit(audit, e, `${where} item ${i}`);
    return;
  }
  if (isAuditEvent(value)) {
    yield fromAudit(audit, value, where);
    return;
  }
  if (!resources) {
    yield {
      kind: "problem",
      where,
      message: `a ${typeof kind === "string" ? kind : "line without kind"}: expected a RecordedReview, an AdmissionReview or an audit.k8s.io Event`,
    };
    return;
  }
  for (const [i, item] of expandLists(value).entries()) {
    const at = item === value ? where : `${where} item ${i}`;
    yield fromResource(item, at, scopes);
  }
}

function recorded(value: Record<string, unknown>, where: string): SourceEvent {
  const path = value.path;
  if (typeof path !== "string" || !REVIEW_PATHS.has(path))
    return {
      kind: "problem",
      where,
      message: `a RecordedReview whose path is not a review path: ${String(path)}`,
    };
  const decoded = decodeAdmissionReview(value.review);
  if (!decoded.ok)
    return {
      kind: "problem",
      where,
      message: `a RecordedReview whose review serve refuses: ${decoded.error.reason}`,
    };
  const decision = value.decision;
  if (!isJsonObject(decision) || typeof decision.allowed !== "boolean")
    return { kind: "problem", where, message: "a RecordedReview without its decision" };
  return {
    kind: "item",
    item: {
      where,
      path,
      apiVersion: decoded.value.apiVersion,
      request: decoded.value.request,
      recorded: {
        warnings: [],
        auditAnnotations: {},
        patch: [],
        ...(decision as Partial<RecordedDecision>),
        allowed: decision.allowed,
      },
    },
  };
}

function fromAudit(audit: AuditReader, event: unknown, where: string): SourceEvent {
  if (!isAuditEvent(event)) return { kind: "problem", where, message: "not an audit.k8s.io Event" };
  const read = audit.read(event);
  if (!read.ok) return { kind: "problem", where, message: read.error };
  if (read.value.kind === "skip") return { kind: "skip", where, reason: read.value.reason };
  return { kind: "item", item: { where, apiVersion: "admission.k8s.io/v1", request: read.value.request } };
}

/** A plain resource, admitted as `eval -r` admits it: a CREATE by celgate's default user. */
function fromResource(item: unknown, where: string, scopes: KindScopes): SourceEvent {
  const ref = resourceRef(item, where);
  if (!ref.ok) return { kind: "problem", where, message: ref.error };
  const built = buildRequest(ref.value, {
    operation: "CREATE",
    object: item as Record<string, unknown>,
    userInfo: DEFAULT_USER,
    uid: where,
    scopes,
  });
  if (!built.ok) return { kind: "problem", where, message: built.error };
  return { kind: "item", item: { where, apiVersion: "admission.k8s.io/v1", request: built.value.request } };
}
