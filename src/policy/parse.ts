/**
 * Reading policy files: YAML or JSON text → the typed policy model, validated the way the Kubernetes
 * API server validates admissionregistration.k8s.io objects (pkg/apis/admissionregistration/validation)
 * and defaulted the way it defaults them. Pure: no filesystem; src/sources/files.ts feeds it text.
 *
 * Every problem becomes a Diagnostic located at the offending value (or, for a missing field, at the
 * mapping that should hold it). A document with any error is left out of the set so later stages
 * only ever see well-formed objects; the other documents of the file are still read.
 * CEL expressions are only checked to be non-empty strings here; the CEL compiler checks the rest.
 */
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, visit } from "yaml";
import { EXACT_YAML_NUMBERS } from "../yaml/json-numbers.ts";
import type { Document, YAMLError, YAMLMap } from "yaml";
import type { Diagnostic, DiagnosticSeverity } from "../errors.ts";
import { aliasExcessMessage, checkAliases } from "../yaml/aliases.ts";
import { atNodes, type Field, offsetOf, YamlMap, type YamlNode, YamlReader } from "../yaml/reader.ts";
import { resolveAlias, TextPositions, YamlSourceMap } from "../yaml/source-map.ts";
import { describe, missing, POLICY_WORDING } from "./read.ts";
import type { ParsedBinding, ParsedPolicy, PolicySet, RejectedBinding, ResourceObject } from "./types.ts";
import { readMetadata } from "./metadata.ts";
import type { ObjectInput } from "./spec.ts";
import { readValidatingPolicy } from "./validating.ts";
import { readMutatingPolicy } from "./mutating.ts";
import { readValidatingBinding, readMutatingBinding } from "./bindings.ts";

export const ADMISSION_GROUP = "admissionregistration.k8s.io";

/** The admissionregistration kinds celgate reads, and the API versions each is served in. */
export const ACCEPTED_KINDS = {
  ValidatingAdmissionPolicy: ["v1", "v1beta1", "v1alpha1"],
  ValidatingAdmissionPolicyBinding: ["v1", "v1beta1", "v1alpha1"],
  MutatingAdmissionPolicy: ["v1", "v1beta1", "v1alpha1"],
  MutatingAdmissionPolicyBinding: ["v1", "v1beta1", "v1alpha1"],
} as const satisfies Record<string, readonly string[]>;

type AcceptedKind = keyof typeof ACCEPTED_KINDS;

interface DocContext {
  readonly positions: TextPositions;
  readonly doc: Document.Parsed;
  readonly diagnostics: Diagnostic[];
}

function readResource(
  { r, top, apiVersion, source }: ObjectInput,
  kind: string,
  node: YAMLMap,
): ResourceObject | undefined {
  const meta = readMetadata(r, top, false);
  if (r.errors > 0 || meta.name === undefined) return undefined;
  // The document's aliases were bounded by checkAliases; the yaml package's own count would refuse
  // a file that merely uses one anchor more than 100 times.
  const object = node.toJS(r.doc, { maxAliasCount: -1 }) as Record<string, unknown>;
  return {
    apiVersion,
    kind,
    name: meta.name,
    ...(meta.namespace !== undefined && meta.namespace !== "" ? { namespace: meta.namespace } : {}),
    labels: meta.labels,
    object,
    source,
  };
}

interface Collected {
  readonly policies: ParsedPolicy[];
  readonly bindings: ParsedBinding[];
  readonly resources: ResourceObject[];
  readonly rejectedBindings: RejectedBinding[];
  readonly rejectedPolicies: ParsedPolicy[];
}

/** spec.policyName, read without reporting anything (the binding's reader reports). */
function peekPolicyName(r: YamlReader, node: YAMLMap): string | undefined {
  const spec = r.resolve(node.get("spec", true));
  const name = isMap(spec) ? r.resolve(spec.get("policyName", true)) : undefined;
  return isScalar(name) && typeof name.value === "string" ? name.value : undefined;
}

/** metadata.name for labelling diagnostics, read without reporting anything (readMetadata reports). */
function peekName(r: YamlReader, node: YAMLMap): string {
  const meta = r.resolve(node.get("metadata", true));
  const name = isMap(meta) ? r.resolve(meta.get("name", true)) : undefined;
  return isScalar(name) && typeof name.value === "string" ? name.value : "";
}

function readObject(
  dc: DocContext,
  node: YamlNode,
  fallbackOffset: number,
  out: Collected,
  itemPath = "",
): void {
  const r = new YamlReader(dc.doc, dc.diagnostics, POLICY_WORDING, atNodes(dc.positions));
  const offset = offsetOf(node, fallbackOffset);
  if (!isMap(node)) {
    r.report(
      "PE_NOT_OBJECT",
      itemPath,
      offset,
      `a document must be a mapping with apiVersion and kind; got ${describe(node)}`,
    );
    return;
  }
  const top = new YamlMap(r, node, "", offset);
  const avField = top.field("apiVersion");
  const kindField = top.field("kind");
  const apiVersion = avField ? r.string(avField) : undefined;
  const kind = kindField ? r.string(kindField) : undefined;
  for (const [key, f] of [
    ["apiVersion", avField],
    ["kind", kindField],
  ] as const) {
    if (!f)
      r.report(
        "PE_NOT_OBJECT",
        key,
        offset,
        `a Kubernetes object needs "apiVersion" and "kind"; "${key}" is missing`,
      );
  }
  if (apiVersion === undefined || kind === undefined || !avField || !kindField) return;

  r.object = { kind, name: peekName(r, node) };

  const itemsField = top.field("items");
  if (kind === "List" || (kind.endsWith("List") && itemsField && isSeq(itemsField.node))) {
    if (!itemsField) {
      missing(top, "items", 'missing required field "items": a List holds its objects in "items"');
      return;
    }
    const items = r.list(itemsField);
    for (const item of items ?? []) readObject(dc, item.node, item.offset, out, item.path);
    return;
  }

  const input: ObjectInput = { r, top, apiVersion, source: new YamlSourceMap(dc.positions, dc.doc, node) };
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  // One rule for every kind that is not a policy or binding, admissionregistration's own webhook
  // configurations included (an install manifest holds them beside Deployments and CRDs): kept as
  // an object (a param, a Namespace, a CRD) and otherwise left alone.
  if (group !== ADMISSION_GROUP || !Object.hasOwn(ACCEPTED_KINDS, kind)) {
    const res = readResource(input, kind, node);
    if (res) out.resources.push(res);
    return;
  }
  readAdmissionObject(input, kind, avField, out);
}

/** A policy or binding: one of the accepted kinds, in one of its API versions. */
function readAdmissionObject(input: ObjectInput, kind: string, apiVersionField: Field, out: Collected): void {
  const { r, apiVersion } = input;
  const slash = apiVersion.indexOf("/");
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const accepted = kind as AcceptedKind;
  const versions: readonly string[] = ACCEPTED_KINDS[accepted];
  if (!versions.includes(version)) {
    r.report(
      "PE_UNKNOWN_KIND",
      "apiVersion",
      apiVersionField.offset,
      `${kind} is read from apiVersion ${versions.map((v) => `${ADMISSION_GROUP}/${v}`).join(", ")}; got ${JSON.stringify(apiVersion)}`,
    );
    return;
  }
  switch (accepted) {
    case "ValidatingAdmissionPolicy":
    case "MutatingAdmissionPolicy": {
      const p =
        accepted === "ValidatingAdmissionPolicy" ? readValidatingPolicy(input) : readMutatingPolicy(input);
      // With any error the policy is left out of the set, what was well formed kept for its CEL.
      if (p) (r.errors > 0 || p.name === "" ? out.rejectedPolicies : out.policies).push(p);
      return;
    }
    case "ValidatingAdmissionPolicyBinding":
    case "MutatingAdmissionPolicyBinding": {
      const b =
        accepted === "ValidatingAdmissionPolicyBinding"
          ? readValidatingBinding(input)
          : readMutatingBinding(input);
      if (b) out.bindings.push(b);
      else
        out.rejectedBindings.push({
          kind: accepted,
          name: r.object?.name ?? "",
          policyName: peekPolicyName(r, input.top.node),
        });
      return;
    }
  }
}

/** yaml's messages end in " at line L, column C:" and a code frame; the location travels separately. */
function splitYamlMessage(message: string): { message: string; detail?: string } {
  const m = /^([\s\S]*?) at line \d+, column \d+:?\n?([\s\S]*)$/.exec(message);
  if (!m) return { message };
  const detail = (m[2] ?? "").replace(/^\n+|\n+$/g, "");
  return detail ? { message: m[1] ?? message, detail } : { message: m[1] ?? message };
}

/**
 * Parses one policy file's text. Multi-document files (`---`) are read document by document; a
 * document with errors is left out of the set and the others are kept. Bindings are not checked
 * against the policies here, since a policy may live in another file: see checkReferences.
 */
export function parsePolicyText(text: string, file: string): { set: PolicySet; diagnostics: Diagnostic[] } {
  const lineCounter = new LineCounter();
  const positions = new TextPositions(file, lineCounter, text);
  const diagnostics: Diagnostic[] = [];
  const out: Collected = {
    policies: [],
    bindings: [],
    resources: [],
    rejectedBindings: [],
    rejectedPolicies: [],
  };
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: true, ...EXACT_YAML_NUMBERS });
  for (const doc of Array.isArray(docs) ? docs : []) {
    const syntax = (e: YAMLError, severity: DiagnosticSeverity): void => {
      const { message, detail } = splitYamlMessage(e.message);
      const pos = e.linePos?.[0];
      diagnostics.push({
        code: "PE_YAML_SYNTAX",
        severity,
        message,
        location: pos ? { file, line: pos.line, column: pos.col } : positions.at(e.pos[0]),
        ...(detail ? { detail } : {}),
      });
    };
    for (const e of doc.errors) syntax(e, "error");
    for (const w of doc.warnings) syntax(w, "warning");
    if (doc.errors.length > 0) continue;

    let unresolved = false;
    visit(doc, {
      Alias(_, alias) {
        if (alias.resolve(doc) === undefined) {
          unresolved = true;
          diagnostics.push({
            code: "PE_YAML_SYNTAX",
            severity: "error",
            message: `alias *${alias.source} refers to no anchor defined before it`,
            location: positions.at(offsetOf(alias, 0)),
          });
        }
      },
    });
    if (unresolved) continue;
    const excess = checkAliases(doc);
    if (excess !== undefined) {
      diagnostics.push({
        code: "PE_YAML_ALIASES",
        severity: "error",
        message: aliasExcessMessage(excess),
        location: positions.at(offsetOf(excess.alias, 0)),
      });
      continue;
    }

    const dc: DocContext = { positions, doc, diagnostics };
    const root = resolveAlias(doc, doc.contents);
    if (root === null || root === undefined || (isScalar(root) && root.value === null)) continue;
    if (!isScalar(root) && !isMap(root) && !isSeq(root)) continue;
    readObject(dc, root, doc.range[0], out);
  }
  // Reading order follows the model, not the text; people read a file top to bottom.
  const byPosition = (d: Diagnostic): number =>
    d.location ? d.location.line * 1_000_000 + d.location.column : Number.MAX_SAFE_INTEGER;
  diagnostics.sort((a, b) => byPosition(a) - byPosition(b));
  const { rejectedBindings, rejectedPolicies, ...set } = out;
  return {
    set: {
      ...set,
      ...(rejectedBindings.length > 0 ? { rejectedBindings } : {}),
      ...(rejectedPolicies.length > 0 ? { rejectedPolicies } : {}),
    },
    diagnostics,
  };
}

export { checkReferences, mergePolicySets } from "./references.ts";
