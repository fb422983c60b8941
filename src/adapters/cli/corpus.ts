/**
 * The objects `celgate lint` applies mutations to: the requests of the test suites found under the
 * paths it is given (each case as `celgate test` builds it, with the suite's Namespaces and params),
 * and the objects of `--objects` files, each admitted as a CREATE.
 */
import { readFile } from "node:fs/promises";
import { parseAllDocuments } from "yaml";
import { EXACT_YAML_NUMBERS } from "../../yaml/json-numbers.ts";
import type { Diagnostic } from "../../errors.ts";
import { buildRequest, expandLists, resourceRef } from "../../engine/request.ts";
import { KindScopes } from "../../kube/scope.ts";
import type { CorpusEntry } from "../../lint/types.ts";
import type { ResourceObject } from "../../policy/types.ts";
import { DEFAULT_USER } from "../../request/types.ts";
import { loadPolicyPaths } from "../../sources/files.ts";
import { fileSuiteReader, findSuiteFiles, isSuiteFileName } from "../../sources/suites.ts";
import { parseSuiteText } from "../../suite/parse.ts";
import { type PreparedCase, prepareCase, prepareReviewCase } from "../../suite/prepare.ts";
import type { ObjectSource } from "../../suite/types.ts";
import { decodeSavedReview } from "../admission/saved.ts";

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The objects of a YAML or JSON file, Lists opened; undefined when it does not read. */
async function readObjectsFile(path: string): Promise<Json[] | undefined> {
  try {
    const docs = parseAllDocuments(await readFile(path, "utf8"), EXACT_YAML_NUMBERS);
    if (docs.some((d) => d.errors.length > 0)) return undefined;
    return docs.flatMap((d) => expandLists(d.toJS())).filter(isObject);
  } catch {
    return undefined;
  }
}

function namespaceResource(object: Json, file: string): ResourceObject | undefined {
  const meta = isObject(object.metadata) ? object.metadata : {};
  if (typeof meta.name !== "string") return undefined;
  const labels = isObject(meta.labels) ? (meta.labels as Record<string, string>) : {};
  return {
    apiVersion: "v1",
    kind: "Namespace",
    name: meta.name,
    labels,
    object,
    source: { file, locate: () => ({ file, line: 1, column: 1 }) },
  };
}

let uid = 0;
function nextUid(): string {
  uid += 1;
  return `00000000-0000-4000-8000-${String(uid).padStart(12, "0")}`;
}

/** The requests of one suite file; problems are returned as lines for stderr. */
async function suiteCorpus(file: string): Promise<{ entries: CorpusEntry[]; problems: string[] }> {
  const problems: string[] = [];
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    return { entries: [], problems: [`${file}: ${(e as Error).message}`] };
  }
  const parsed = parseSuiteText(text, file);
  const suite = parsed.suite;
  if (!suite)
    return { entries: [], problems: [`${file}: not a readable test suite; its objects are left out`] };
  const resources = suite.resources.length
    ? (await loadPolicyPaths(suite.resources.map((r) => r.value.resolved))).set.resources
    : [];
  const cache = new Map<string, Json | undefined>();
  const objectOf = async (source: ObjectSource): Promise<Json | undefined> => {
    if (source.inline) return source.inline;
    const path = source.file.resolved;
    if (!cache.has(path)) cache.set(path, (await readObjectsFile(path))?.[0]);
    const o = cache.get(path);
    return o ? structuredClone(o) : undefined;
  };
  const scopes = KindScopes.from(resources.map((r) => r.object));
  const entries: CorpusEntry[] = [];
  for (const [index, c] of suite.cases.entries()) {
    // Built by the suite runner's own preparation, so lint sees the requests `celgate test` runs.
    const diagnostics: Diagnostic[] = [];
    let prepared: PreparedCase | undefined;
    if (c.review) {
      prepared = await prepareReviewCase(suite, c, fileSuiteReader, decodeSavedReview, diagnostics);
    } else {
      const object = await objectOf(c.object.value);
      const oldObject = c.oldObject ? await objectOf(c.oldObject.value) : undefined;
      if (!object || !resourceRef(object, c.object.path).ok || (c.oldObject && !oldObject)) {
        problems.push(`${file}: ${c.name}: its object does not read; left out`);
        continue;
      }
      const defaults = c.defaulting ?? true;
      prepared = prepareCase(suite, c, index, { object, oldObject, defaults, scopes }, diagnostics);
    }
    const problem = diagnostics.find((d) => d.severity === "error");
    if (!prepared || problem) {
      problems.push(`${file}: ${c.name}: ${problem?.message ?? "its request cannot be built"}; left out`);
      continue;
    }
    const ns = c.namespaceObject?.value;
    const nsResource = ns ? namespaceResource(ns, file) : undefined;
    entries.push({
      request: prepared.request,
      resources: nsResource ? [...resources, nsResource] : resources,
      origin: `${file}: ${c.name}`,
    });
  }
  return { entries, problems };
}

/** The corpus for `celgate lint`: the suites under `paths`, and the objects of `objectFiles`. */
export async function lintCorpus(
  paths: readonly string[],
  objectFiles: readonly string[],
): Promise<{ entries: CorpusEntry[]; problems: string[] }> {
  const entries: CorpusEntry[] = [];
  const problems: string[] = [];
  const suites = await findSuiteFiles(paths);
  problems.push(...suites.problems);
  // A policy file given as a PATH is not a suite; only *.test.yaml files are.
  for (const file of suites.files.filter((f) => isSuiteFileName(f))) {
    const s = await suiteCorpus(file);
    entries.push(...s.entries);
    problems.push(...s.problems);
  }
  for (const file of objectFiles) {
    const objects = await readObjectsFile(file);
    if (!objects) {
      problems.push(`${file}: not readable YAML or JSON; left out`);
      continue;
    }
    objects.forEach((object, i) => {
      const ref = resourceRef(object, `${file}#${i}`);
      if (!ref.ok) {
        problems.push(ref.error);
        return;
      }
      const built = buildRequest(ref.value, {
        operation: "CREATE",
        object,
        userInfo: DEFAULT_USER,
        uid: nextUid(),
      });
      if (!built.ok) {
        problems.push(`${file}#${i}: ${built.error}; left out`);
        return;
      }
      entries.push({
        request: built.value.request,
        resources: [],
        origin: `${file}: ${ref.value.kind} ${ref.value.name}`,
      });
    });
  }
  return { entries, problems };
}
