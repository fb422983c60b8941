/**
 * Reading the data files named on the command line and in the REPL (objects, requests, params,
 * resources): YAML or JSON, one or many documents. Problems come back as messages naming the file
 * and line, never throws. Shared by the CLI and the REPL, so neither imports the other's modules.
 */
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { LineCounter, parseAllDocuments } from "yaml";
import { err, ok, type Result } from "../../result.ts";
import { listPolicyFiles } from "../../sources/files.ts";
import { aliasExcessMessage, checkAliases } from "../../yaml/aliases.ts";
import { EXACT_YAML_NUMBERS, isJsonObject as isJsonMap, readJsonText } from "../../yaml/json-numbers.ts";

export interface DataDocument {
  readonly file: string;
  /** 1-based index of the document in its file. */
  readonly index: number;
  readonly value: unknown;
}

export interface ParseOptions {
  /** Keep integers beyond 2^53 exact (as bigint); only for values that go straight into CEL. */
  readonly bigInts?: boolean;
}

/**
 * Parses YAML/JSON text into its non-empty documents. JSON text is read as the API server's decoder
 * reads it (an int64 exactly, `1.0` a double: yaml/json-numbers.ts), so a saved AdmissionReview
 * reads as the webhook reads its body; YAML's integers as kubectl's YAML to JSON conversion gives
 * them (exactYamlInts). JSON that does not parse goes to the YAML parser, which says where it fails.
 */
export function parseDocuments(
  text: string,
  file: string,
  options: ParseOptions = {},
): Result<DataDocument[], string> {
  if (!options.bigInts) {
    const json = readJsonText(text);
    if (json instanceof RangeError)
      return err(`${file}: ${json.message}, which the API server's decoder refuses`);
    if (json !== undefined) return ok([{ file, index: 1, value: json.value }]);
  }
  const lineCounter = new LineCounter();
  const numbers = options.bigInts ? { intAsBigInt: true } : EXACT_YAML_NUMBERS;
  const docs = parseAllDocuments(text, { ...numbers, lineCounter });
  if (!Array.isArray(docs)) return ok([]);
  const out: DataDocument[] = [];
  for (const [i, doc] of docs.entries()) {
    const problem = doc.errors[0];
    if (problem) {
      const pos = problem.linePos?.[0];
      const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
      const first = problem.message.split("\n")[0] ?? problem.message;
      return err(`${where}: not valid YAML or JSON: ${first.replace(/ at line \d+, column \d+:?$/, "")}`);
    }
    const excess = checkAliases(doc);
    if (excess !== undefined) {
      const pos = lineCounter.linePos(excess.alias.range?.[0] ?? 0);
      return err(`${file}:${pos.line}:${pos.col}: ${aliasExcessMessage(excess)}`);
    }
    // Bounded by checkAliases above, by Kubernetes' rule rather than the yaml package's fixed count.
    const value: unknown = doc.toJS({ maxAliasCount: -1 });
    if (value === null || value === undefined) continue;
    out.push({ file, index: i + 1, value });
  }
  return ok(out);
}

/** Reads a file of one or more documents. */
export async function readDocuments(
  file: string,
  options: ParseOptions = {},
): Promise<Result<DataDocument[], string>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    return err(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseDocuments(text, file, options);
}

/** Reads a file that must hold exactly one document. */
export async function readSingleDocument(
  file: string,
  options: ParseOptions = {},
): Promise<Result<unknown, string>> {
  const docs = await readDocuments(file, options);
  if (!docs.ok) return docs;
  if (docs.value.length !== 1)
    return err(`${file}: expected one YAML or JSON document, found ${docs.value.length}`);
  return ok(docs.value[0]?.value);
}

/** A data file to read: where it is, and how to name it to the person (as they wrote the path). */
export interface DataFile {
  readonly path: string;
  readonly shown: string;
}

/**
 * The files a path names: a file itself, or a directory's YAML and JSON files, walked as `-p` walks
 * a policy directory (sources/files.ts). `shown` is the path as given, for the files of a directory
 * that path joined with the file's place under it. An empty list when a directory holds none.
 */
export async function dataFiles(path: string, shown: string): Promise<Result<DataFile[], string>> {
  const listed = await listPolicyFiles([path]);
  const problem = listed.diagnostics[0];
  if (problem) return err(problem.message);
  return ok(
    listed.files.map((f) => ({ path: f, shown: f === path ? shown : join(shown, relative(path, f)) })),
  );
}

export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return isJsonMap(v);
}
