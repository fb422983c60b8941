/**
 * The CEL engine's import structure (issue 24): the rest of celgate reaches it only through its
 * facade, src/cel/index.ts, and its folders import one another without a cycle and only downwards
 * in FOLDER_ORDER, so each can be read, tested and changed from the bottom up (the Go ports and
 * runtime values, then the function libraries, then the planner, then the driver and facade).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../../src/", import.meta.url));
const CEL = join(SRC, "cel");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
  );
}

/** The files a source file imports (values and types alike), as absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g))
    out.push(resolve(dirname(file), m[1] as string));
  return out;
}

/** The folder a file of src/cel belongs to, relative to src/cel ("." for its top level). */
function folderOf(file: string): string {
  const dir = dirname(relative(CEL, file));
  return dir === "." ? "." : (dir.split("/")[0] as string);
}

/**
 * The folders of src/cel from the bottom up (docs/architecture.md, "The CEL engine's modules"): a
 * folder imports only from folders before it. `go` (ports of Go's strconv, quoting, time, netip and
 * url) and `runtime` (the value model) import no other folder; `regex` compiles patterns for the
 * evaluation state above it; `check`, the type checker, reads the syntax tree, the values, the
 * libraries' declarations and the regex syntax, and stands below the planner that is to take its
 * annotations.
 */
const FOLDER_ORDER = ["go", "runtime", "library", "syntax", "env", "regex", "state", "check", "plan", "."];

/**
 * Imports from outside src/cel that may skip its facade, each with its reason. src/kube/schemas
 * builds Kubernetes' schema types in the type checker's own representation, through the checker's
 * own facade.
 */
const FACADE_EXCEPTIONS: readonly (readonly [from: string, to: string])[] = [
  ["kube/schemas/", "cel/check/index.ts"],
];

/** Edges between the folders of src/cel: from → to → the imports that make the edge. */
function folderEdges(): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(CEL)) {
    const from = folderOf(file);
    for (const target of importsOf(file)) {
      if (!target.startsWith(`${CEL}/`)) continue;
      const to = folderOf(target);
      if (to === from) continue;
      const out = edges.get(from) ?? new Map<string, string[]>();
      out.set(to, [...(out.get(to) ?? []), `${relative(CEL, file)} → ${relative(CEL, target)}`]);
      edges.set(from, out);
    }
  }
  return edges;
}

void test("code outside src/cel imports the CEL engine only through src/cel/index.ts", () => {
  const bypass: string[] = [];
  for (const file of sourceFiles(SRC)) {
    if (file.startsWith(`${CEL}/`)) continue;
    for (const target of importsOf(file))
      if (
        target.startsWith(`${CEL}/`) &&
        target !== join(CEL, "index.ts") &&
        !FACADE_EXCEPTIONS.some(
          ([from, to]) => relative(SRC, file).startsWith(from) && relative(SRC, target) === to,
        )
      )
        bypass.push(`${relative(SRC, file)} → ${relative(SRC, target)}`);
  }
  assert.deepEqual(bypass, []);
});

void test("the folders of src/cel import one another without a cycle", () => {
  const edges = new Map([...folderEdges()].map(([from, to]) => [from, new Set(to.keys())]));
  // Depth-first search; a folder met again while still on the path closes a cycle.
  const done = new Set<string>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (f: string): void => {
    if (path.includes(f)) {
      cycles.push([...path.slice(path.indexOf(f)), f].join(" → "));
      return;
    }
    if (done.has(f)) return;
    path.push(f);
    for (const g of edges.get(f) ?? []) visit(g);
    path.pop();
    done.add(f);
  };
  for (const f of edges.keys()) visit(f);
  assert.deepEqual(cycles, []);
  // The function libraries read only the value model and the Go ports: what made cel ⇄ cel/library
  // a cycle.
  assert.deepEqual([...(edges.get("library") ?? [])].sort(), ["go", "runtime"]);
});

void test("each folder of src/cel imports only folders below it in FOLDER_ORDER", () => {
  const folders = new Set(sourceFiles(CEL).map(folderOf));
  assert.deepEqual([...folders].sort(), [...FOLDER_ORDER].sort(), "FOLDER_ORDER names every folder");
  const upward: string[] = [];
  for (const [from, out] of folderEdges())
    for (const [to, imports] of out)
      if (FOLDER_ORDER.indexOf(to) > FOLDER_ORDER.indexOf(from)) upward.push(...imports);
  assert.deepEqual(upward, []);
});
