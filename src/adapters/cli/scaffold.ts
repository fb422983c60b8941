/**
 * `celgate test --update SUITE -p POLICY... -r OBJECT...`: a new test suite whose expectations are
 * what happens now (Kyverno users have `kyverno create test` for this). Each object becomes a CREATE
 * case; the suite is run as `celgate test` would run it, each case's decision is written as its
 * expectations, and the file is run once more to prove it passes before it is kept. An existing
 * file is never overwritten without --force.
 */
import { readdir, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { stringify as yamlStringify } from "yaml";
import type { CelExtras } from "../../cel/index.ts";
import { expandLists } from "../../engine/request.ts";
import { err, ok, type Result } from "../../result.ts";
import { fileSuiteReader, isSuiteFileName } from "../../sources/suites.ts";
import { parseSuiteText, suiteNameFromFile } from "../../suite/parse.ts";
import { type CaseResult, loadSuite, runLoadedSuite, type SuiteResult } from "../../suite/run.ts";
import { SUITE_API_VERSION, SUITE_KIND } from "../../suite/types.ts";
import { formatDiagnostics } from "../output/diagnostics.ts";
import { isJsonObject, parseDocuments, readDocuments } from "../input/documents.ts";
import type { CliIO } from "./io.ts";

export interface ScaffoldRequest {
  /** The suite file to write, resolved, and as the user wrote it. */
  readonly target: string;
  readonly written: string;
  readonly policies: readonly string[];
  /** Object files or directories, resolved; `-` is standard input. */
  readonly objects: readonly string[];
  /** Parameter objects and Namespaces (the suite's `resources`). */
  readonly params: readonly string[];
  readonly force: boolean;
  readonly extras: CelExtras;
  /** `--kubernetes-version`, when given. */
  readonly kubernetesVersion?: string | undefined;
  readonly defaults: boolean;
}

type Case = Record<string, unknown>;

const DATA_FILE = /\.(ya?ml|json)$/;

/** The data files under a path: itself, or a directory's YAML and JSON files (not suites), sorted. */
async function dataFiles(path: string): Promise<string[]> {
  const info = await stat(path);
  if (!info.isDirectory()) return [path];
  const names = (await readdir(path, { recursive: true })).sort();
  return names
    .filter((n) => DATA_FILE.test(n) && !isSuiteFileName(n) && !n.split(sep).some((p) => p.startsWith(".")))
    .map((n) => join(path, n));
}

/** A path as the suite file names it: relative to its directory, with `/`. */
function fromSuite(target: string, path: string): string {
  const rel = relative(dirname(target), path).split(sep).join("/");
  return rel === "" ? "." : rel;
}

/** `Deployment web`, `Deployment web (namespace prod)`: a case name without `/`, for --run. */
function caseName(object: Record<string, unknown>): string {
  const meta = isJsonObject(object.metadata) ? object.metadata : {};
  const name = typeof meta.name === "string" && meta.name !== "" ? meta.name : "(no name)";
  const ns =
    typeof meta.namespace === "string" && meta.namespace !== "" ? ` (namespace ${meta.namespace})` : "";
  return `${String(object.kind)} ${name}${ns}`;
}

/** One case per object: by file when the file holds just it, else inline. */
async function casesFor(req: ScaffoldRequest, io: CliIO): Promise<Result<Case[], string>> {
  const cases: Case[] = [];
  const names = new Map<string, number>();
  for (const path of req.objects) {
    let files: string[];
    try {
      files = path === "-" ? ["-"] : await dataFiles(path);
    } catch (e) {
      return err(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    for (const file of files) {
      const docs = file === "-" ? parseDocuments(await io.stdin(), "<stdin>") : await readDocuments(file);
      if (!docs.ok) return docs;
      const items = docs.value.flatMap((d) =>
        expandLists(d.value).map((item) => ({ item, list: item !== d.value })),
      );
      for (const { item, list } of items) {
        if (!isJsonObject(item) || typeof item.kind !== "string" || typeof item.apiVersion !== "string")
          return err(`${file}: expected Kubernetes objects with apiVersion and kind`);
        const base = caseName(item);
        const n = (names.get(base) ?? 0) + 1;
        names.set(base, n);
        const byFile = file !== "-" && items.length === 1 && !list;
        cases.push({
          name: n === 1 ? base : `${base} (${n})`,
          ...(byFile ? { objectFile: fromSuite(req.target, file) } : { object: item }),
          expect: { allowed: true },
        });
      }
    }
  }
  if (cases.length === 0) return err(`no objects found in ${req.objects.join(", ")}`);
  return ok(cases);
}

/** What happened to a case, as the expectations that pin it. */
function expectationsOf(c: CaseResult): Record<string, unknown> {
  const a = c.actual;
  const mutated = c.results.some((r) => r.policyKind === "MutatingAdmissionPolicy" && r.outcome !== "skip");
  return {
    allowed: a.allowed,
    ...(a.status ? { code: a.status.code, reason: a.status.reason, message: a.status.message } : {}),
    ...(a.warnings.length > 0 ? { warnings: [...a.warnings] } : {}),
    ...(Object.keys(a.auditAnnotations).length > 0 ? { auditAnnotations: { ...a.auditAnnotations } } : {}),
    ...(a.patch.length > 0 ? { patch: [...a.patch] } : mutated ? { unchanged: true } : {}),
  };
}

function suiteText(req: ScaffoldRequest, cases: readonly Case[]): string {
  const doc = {
    apiVersion: SUITE_API_VERSION,
    kind: SUITE_KIND,
    metadata: { name: suiteNameFromFile(req.target) },
    policies: req.policies.map((p) => fromSuite(req.target, p)),
    ...(req.params.length > 0 ? { resources: req.params.map((p) => fromSuite(req.target, p)) } : {}),
    cases,
  };
  return yamlStringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });
}

/** Parses, loads and runs a suite text as `celgate test` would. */
async function runText(req: ScaffoldRequest, text: string): Promise<Result<SuiteResult, string>> {
  const parsed = parseSuiteText(text, req.target);
  const problems = (diagnostics: Parameters<typeof formatDiagnostics>[0]) =>
    `the suite cannot run:\n${formatDiagnostics(diagnostics).trimEnd()}`;
  if (!parsed.suite) return err(problems(parsed.diagnostics));
  const loaded = await loadSuite(parsed.suite, fileSuiteReader, {
    extras: req.extras,
    defaults: req.defaults,
    ...(req.kubernetesVersion !== undefined ? { kubernetesVersion: req.kubernetesVersion } : {}),
  });
  if (loaded.broken) return err(problems(loaded.diagnostics));
  return ok(runLoadedSuite(loaded));
}

/**
 * Writes the suite. Resolves to a usage error (the file exists, bad input, the policies do not
 * load), or to the suite as written and its run.
 */
export async function scaffoldSuite(req: ScaffoldRequest, io: CliIO): Promise<Result<SuiteResult, string>> {
  if (!isSuiteFileName(req.target))
    return err(
      `${req.written}: a suite file's name ends in .test.yaml or .test.yml, so that celgate test finds it`,
    );
  const exists = await stat(req.target).then(
    () => true,
    () => false,
  );
  if (exists && !req.force) return err(`${req.written} exists; --force overwrites it`);
  const cases = await casesFor(req, io);
  if (!cases.ok) return cases;
  // The same request building, defaults and policies as `celgate test`: run it to learn what happens.
  const probe = await runText(req, suiteText(req, cases.value));
  if (!probe.ok) return probe;
  const expected = cases.value.map((c, i) => {
    const result = probe.value.cases[i];
    return result ? { ...c, expect: expectationsOf(result) } : c;
  });
  const text = suiteText(req, expected);
  const check = await runText(req, text);
  if (!check.ok) return check;
  const wrong = check.value.cases.filter((c) => !c.passed);
  if (wrong.length > 0)
    return err(
      `the new suite does not pass its own expectations (${wrong.map((c) => c.name).join(", ")}); nothing was written`,
    );
  try {
    await writeFile(req.target, text);
  } catch (e) {
    return err(`cannot write ${req.written}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return ok(check.value);
}
