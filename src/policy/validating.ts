/**
 * ValidatingAdmissionPolicy: its validations and audit annotations on top of the shared spec.
 */
import { isSeq } from "yaml";
import { dns1123Subdomain, qualifiedName } from "./fields.ts";
import type { Field, YamlMap, YamlReader } from "../yaml/reader.ts";
import { boundedSeq, oneOf, optionalNonEmptyString, requiredString, UniqueNames } from "./read.ts";
import type { AuditAnnotation, Validation, ValidationReason, ValidatingPolicy } from "./types.ts";
import { readMetadata, TOP_FIELDS } from "./metadata.ts";
import { type ObjectInput, readCommonSpec, requireSpec } from "./spec.ts";

// validation.go accepts Forbidden, Invalid and RequestEntityTooLarge; the API reference (and the
// model) also name Unauthorized, so it is accepted too rather than rejecting documented values.
const REASONS = [
  "Unauthorized",
  "Forbidden",
  "Invalid",
  "RequestEntityTooLarge",
] as const satisfies readonly ValidationReason[];
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_VALUE_EXPRESSION_BYTES = 5 * 1024;

const VALIDATING_SPEC_FIELDS = [
  "paramKind",
  "matchConstraints",
  "validations",
  "failurePolicy",
  "auditAnnotations",
  "matchConditions",
  "variables",
];
const VALIDATION_FIELDS = ["expression", "message", "reason", "messageExpression"];
const AUDIT_ANNOTATION_FIELDS = ["key", "valueExpression"];

function readValidation(r: YamlReader, item: Field): Validation | undefined {
  const view = r.mapping(item);
  if (!view) return undefined;
  view.known(VALIDATION_FIELDS);
  const before = r.errors;
  const expression = requiredString(view, "expression");
  const messageExpression = optionalNonEmptyString(view, "messageExpression");
  const message = optionalNonEmptyString(view, "message");
  const messageField = view.field("message");
  if (message !== undefined && messageField && /[\r\n]/.test(message.trim())) {
    r.report("PE_FIELD_VALUE", messageField.path, messageField.offset, "must not contain line breaks");
  }
  const reasonField = view.field("reason");
  let reason: ValidationReason | undefined;
  if (reasonField) {
    const s = r.string(reasonField);
    if (s !== undefined) reason = oneOf(r, reasonField, s, REASONS);
  }
  if (r.errors > before || expression === undefined) return undefined;
  return {
    expression,
    ...(message !== undefined ? { message } : {}),
    ...(messageExpression !== undefined ? { messageExpression } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}

function readAuditAnnotations(
  r: YamlReader,
  spec: YamlMap,
  policyName: string | undefined,
): AuditAnnotation[] {
  const out: AuditAnnotation[] = [];
  const keys = new UniqueNames(r, "audit annotation key");
  for (const item of boundedSeq(r, spec, "auditAnnotations", MAX_AUDIT_ANNOTATIONS)) {
    const view = r.mapping(item);
    if (!view) continue;
    view.known(AUDIT_ANNOTATION_FIELDS);
    const before = r.errors;
    const key = requiredString(view, "key");
    const keyField = view.field("key");
    if (key !== undefined && keyField) {
      // The audit annotation is recorded as "<policy name>/<key>", which must be a qualified name;
      // the policy name is checked on its own, so only the key's part of that is reported here.
      const asName =
        policyName !== undefined && dns1123Subdomain(policyName).length === 0
          ? `${policyName}/${key}`
          : `x/${key}`;
      const errors = qualifiedName(asName).map((e) => e.replace(/^name part /, ""));
      for (const e of errors) {
        r.report(
          "PE_FIELD_VALUE",
          keyField.path,
          keyField.offset,
          `${e} (the key becomes "<policy name>/<key>"); got ${JSON.stringify(key)}`,
        );
      }
      keys.first(keyField, key);
    }
    const valueExpression = requiredString(view, "valueExpression");
    const veField = view.field("valueExpression");
    if (valueExpression !== undefined && veField) {
      const bytes = Buffer.byteLength(valueExpression.trim(), "utf8");
      if (bytes > MAX_AUDIT_VALUE_EXPRESSION_BYTES) {
        r.report(
          "PE_FIELD_VALUE",
          veField.path,
          veField.offset,
          `must not exceed ${MAX_AUDIT_VALUE_EXPRESSION_BYTES} bytes in length; got ${bytes}`,
        );
      }
    }
    if (r.errors === before && key !== undefined && valueExpression !== undefined)
      out.push({ key, valueExpression });
  }
  return out;
}

export function readValidatingPolicy({
  r,
  top,
  apiVersion,
  source,
}: ObjectInput): ValidatingPolicy | undefined {
  top.known(TOP_FIELDS);
  const meta = readMetadata(r, top, true);
  const spec = requireSpec(top);
  if (!spec) return undefined;
  spec.known(VALIDATING_SPEC_FIELDS);
  const common = readCommonSpec(r, spec, false);
  const validations: Validation[] = [];
  for (const item of spec.list("validations") ?? []) {
    const v = readValidation(r, item);
    if (v) validations.push(v);
  }
  const auditAnnotations = readAuditAnnotations(r, spec, meta.name);
  const countItems = (key: string): number => {
    const f = spec.field(key);
    return f && isSeq(f.node) ? f.node.items.length : 0;
  };
  if (countItems("validations") === 0 && countItems("auditAnnotations") === 0) {
    const f = spec.field("validations");
    r.report(
      "PE_MISSING_FIELD",
      spec.child("validations"),
      f ? f.offset : spec.offset,
      "validations or auditAnnotations must contain at least one item",
    );
  }
  return {
    kind: "ValidatingAdmissionPolicy",
    name: meta.name ?? "",
    apiVersion,
    source,
    ...common,
    annotations: meta.annotations,
    validations,
    auditAnnotations,
  };
}
