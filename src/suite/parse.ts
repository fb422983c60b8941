/**
 * Reading a test suite file: YAML text → a Suite whose cases have their defaults merged in. Pure (no
 * filesystem): files the suite names are only resolved against its directory here and read later.
 *
 * The format is strict where a slip would silently test less: an unknown key (a misspelt `alowed`)
 * is an error, not a warning, since an expectation that is never checked is a test that cannot fail.
 * Every problem is a TE_SUITE diagnostic at file:line:col with the field path, like policy diagnostics.
 */
import { dirname } from "node:path";
import { isSeq } from "yaml";
import type { Document, Node } from "yaml";
import type { Diagnostic, SourceLocation } from "../errors.ts";
import { byPath, offsetOf, readDocuments, type YamlMap, YamlReader } from "../yaml/reader.ts";
import { type TextPositions, YamlSourceMap } from "../yaml/source-map.ts";
import { CASE_FIELDS, type Fields, fields, type Walk, walkCases } from "./cases.ts";
import { readRules } from "./objects.ts";
import { describe, fileRefs, report, SUITE_WORDING, scalar, text } from "./read.ts";
import { type At, type FileRef, SUITE_API_VERSION, SUITE_KIND, type Suite } from "./types.ts";

const TOP_FIELDS = [
  "apiVersion",
  "kind",
  "metadata",
  "policies",
  "resources",
  "authorizer",
  "defaults",
  "cases",
];
const METADATA_FIELDS = ["name", "description"];

export interface ParsedSuite {
  /** Undefined when the file has errors: a suite runs whole or not at all. */
  readonly suite: Suite | undefined;
  /**
   * With errors, the suite as far as it could be read (its files and the cases without errors),
   * so that the problems of the files it names are reported in the same run.
   */
  readonly partial?: Suite;
  /** The suite's name for reports, even when it has errors (metadata.name, else from the file name). */
  readonly name: string;
  readonly diagnostics: Diagnostic[];
}

/** The default suite name: the file name without `.test.yaml`. */
export function suiteNameFromFile(file: string): string {
  const base = file.split(/[\\/]/).at(-1) ?? file;
  return base.replace(/\.test\.ya?ml$/, "").replace(/\.ya?ml$/, "");
}

function yamlProblem(
  file: string,
  e: { message: string; linePos?: readonly { line: number; col: number }[] },
): Diagnostic {
  const pos = e.linePos?.[0];
  const first = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "");
  return {
    code: "TE_SUITE",
    severity: "error",
    message: `not valid YAML: ${first}`,
    location: { file, line: pos?.line ?? 1, column: pos?.col ?? 1 },
  };
}

/** The suite's document, or the diagnostics that say why there is none to read. */
function suiteDocument(
  text: string,
  file: string,
): { doc: Document.Parsed; positions: TextPositions } | { diagnostics: Diagnostic[] } {
  const { docs, positions } = readDocuments(text, file);
  const fail = (message: string, location: SourceLocation = { file, line: 1, column: 1 }) => ({
    diagnostics: [{ code: "TE_SUITE", severity: "error", message, location } satisfies Diagnostic],
  });
  const nonEmpty = docs.filter((d) => d.contents !== null || d.errors.length > 0);
  const doc = nonEmpty[0];
  if (!doc) return fail("the file is empty; expected a PolicyTest document");
  if (doc.errors.length > 0) return { diagnostics: doc.errors.map((e) => yamlProblem(file, e)) };
  const second = nonEmpty[1];
  if (second)
    return fail(
      "a suite file holds one document; split the suites into files",
      positions.at(second.contents?.range?.[0] ?? second.range[0]),
    );
  // Decoding the whole document first refuses alias bombs before anything is read.
  try {
    doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    return fail(`cannot read the document: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!doc.contents) return fail("the file is empty; expected a PolicyTest document");
  return { doc, positions };
}

/** apiVersion, kind and metadata; the suite's name (metadata.name, else `fallback`). */
function readHeader(top: YamlMap, fallback: string): string {
  const { r } = top;
  const apiVersion = top.get("apiVersion");
  const kind = top.get("kind");
  if (scalar(apiVersion) !== SUITE_API_VERSION || scalar(kind) !== SUITE_KIND)
    report(
      r,
      kind !== undefined && scalar(kind) !== SUITE_KIND ? kind : (apiVersion ?? top),
      `expected apiVersion: ${SUITE_API_VERSION} and kind: ${SUITE_KIND}, got ${describe(apiVersion?.node)} and ${describe(kind?.node)}`,
    );
  let name = fallback;
  const metadata = top.get("metadata");
  if (metadata !== undefined) {
    const meta = r.mapping(metadata);
    if (meta) {
      meta.known(METADATA_FIELDS, "metadata");
      const n = meta.get("name");
      if (n !== undefined) name = text(r, n, { nonEmpty: true }) ?? name;
      const description = meta.get("description");
      if (description !== undefined) text(r, description);
    }
  }
  return name;
}

/** What the suite tests: policy and resource files, the authorizer's rules, defaults and cases. */
function readBody(top: YamlMap, dir: string): Omit<Suite, "file" | "name" | "locate"> {
  const { r } = top;
  let policies: At<FileRef>[] = [];
  const policiesField = top.get("policies");
  if (policiesField === undefined)
    report(r, top, "missing field 'policies': the policy files or directories to test");
  else {
    policies = fileRefs(r, policiesField, dir) ?? [];
    if (isSeq(policiesField.node) && policiesField.node.items.length === 0)
      report(r, policiesField, "expected at least one policy file or directory");
  }
  const resourcesField = top.get("resources");
  const resources = resourcesField === undefined ? [] : (fileRefs(r, resourcesField, dir) ?? []);
  const authorizerField = top.get("authorizer");
  const authorizer = authorizerField === undefined ? [] : readRules(r, authorizerField);
  let defaults: Fields = {};
  const defaultsField = top.get("defaults");
  if (defaultsField !== undefined) {
    const d = r.mapping(defaultsField);
    if (d) {
      d.known(CASE_FIELDS, "defaults");
      defaults = fields(d, dir);
    }
  }
  const w: Walk = { r, dir, cases: [], names: new Map() };
  const cases = top.get("cases");
  if (cases === undefined) report(r, top, "missing field 'cases'");
  else walkCases(w, cases, defaults, "");
  return { policies, resources, authorizer, cases: w.cases };
}

/** Parses one suite file's text. */
export function parseSuiteText(text: string, file: string): ParsedSuite {
  const fileName = suiteNameFromFile(file);
  const loaded = suiteDocument(text, file);
  if ("diagnostics" in loaded) return { suite: undefined, name: fileName, diagnostics: loaded.diagnostics };
  const { doc, positions } = loaded;
  const contents = doc.contents as Node;
  const map = new YamlSourceMap(positions, doc, contents);
  const r = new YamlReader(doc, [], SUITE_WORDING, byPath(map, doc, positions));
  const root = r.resolve(contents);
  const top = root ? r.mapping({ node: root, offset: offsetOf(contents, 0), path: "" }) : undefined;
  if (!top) return { suite: undefined, name: fileName, diagnostics: r.diagnostics };
  top.known(TOP_FIELDS, "a PolicyTest");
  const name = readHeader(top, fileName);
  const body = readBody(top, dirname(file));
  const byPosition = (d: Diagnostic): number =>
    d.location ? d.location.line * 1_000_000 + d.location.column : Number.MAX_SAFE_INTEGER;
  const diagnostics = [...r.diagnostics].sort((a, b) => byPosition(a) - byPosition(b));
  const suite: Suite = { file, name, ...body, locate: (path) => map.locate(path) };
  if (r.errors > 0) return { suite: undefined, partial: suite, name, diagnostics };
  return { suite, name, diagnostics };
}
