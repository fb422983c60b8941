/**
 * Tab completion for the REPL: `:commands`, file names after the loading commands, variables and
 * global functions at the start of a name, and after a dot the fields of the value found there
 * (`object.spec.con` → `containers`) plus the methods and macros that apply to its type.
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type CelValue, toJson, typeName } from "../../cel/index.ts";
import { REPL_COMMANDS, type ReplSession } from "./session.ts";

/** node:readline's completer result: the candidates, and the end of the line they replace. */
export type Completion = [string[], string];

/** Macros are not in the function tables; they apply to lists and maps. */
const MACROS = ["all", "exists", "exists_one", "existsOne", "filter", "map", "transformList", "transformMap"];
/** Global names that are not variables or functions. */
const GLOBALS = [
  "has",
  "true",
  "false",
  "null",
  "int",
  "uint",
  "double",
  "string",
  "bool",
  "bytes",
  "list",
  "map",
  "type",
];

const FILE_COMMANDS = new Set(["object", "old", "request", "params", "namespace", "policy"]);

/** A trailing path: identifiers joined by dots, with `[0]` or `["key"]` between, and a partial name. */
const TRAILING_PATH =
  /((?:[A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\]|\["[^"\]]*"\]|\['[^'\]]*'\])*)\.([A-Za-z_][A-Za-z0-9_]*)?$/;
const TRAILING_NAME = /(?:^|[^A-Za-z0-9_.\]"')])([A-Za-z_][A-Za-z0-9_]*)?$/;

export function complete(session: ReplSession, line: string): Completion {
  const command = /^:(\S*)$/.exec(line);
  if (command) {
    const names = REPL_COMMANDS.map((c) => `:${c.name}`);
    return [names.filter((n) => n.startsWith(line)), line];
  }
  const withFile = /^:(\S+)\s+(.*)$/.exec(line);
  if (withFile) {
    if (FILE_COMMANDS.has(withFile[1] as string)) return completeFile(session, withFile[2] as string);
    if (withFile[1] !== "let") return [[], line];
  }
  const path = TRAILING_PATH.exec(line);
  if (path) {
    const partial = path[2] ?? "";
    return [members(session, path[1] as string).filter((m) => m.startsWith(partial)), partial];
  }
  const name = TRAILING_NAME.exec(line);
  const partial = name?.[1] ?? "";
  if (partial === "") return [[], ""];
  const functions = [...session.environment().functions]
    .filter(([n, overloads]) => /^[A-Za-z]/.test(n) && overloads.some((o) => !o.member))
    .map(([n]) => n);
  const candidates = unique([...session.variableNames(), ...GLOBALS, ...functions]);
  return [candidates.filter((c) => c.startsWith(partial)).sort(), partial];
}

/** What may follow `base.`: map fields, methods for the value's type, or qualified function names. */
function members(session: ReplSession, base: string): string[] {
  const env = session.environment();
  // `math.`, `optional.`, `base64.`: namespaces of global functions, not values.
  const qualified = [...env.functions.keys()]
    .filter((n) => n.startsWith(`${base}.`))
    .map((n) => n.slice(base.length + 1));
  if (base === "variables") return [...session.letNames(), ...qualified].sort();
  const value = session.peek(base);
  if (value === undefined) return qualified.sort();
  const fields = fieldNames(value);
  const type = typeName(value);
  const methods = [...env.functions]
    .filter(
      ([n, overloads]) =>
        /^[A-Za-z]/.test(n) && overloads.some((o) => o.member && (o.args[0] === type || o.args[0] === "dyn")),
    )
    .map(([n]) => n);
  const macros = type === "list" || type === "map" ? MACROS : [];
  return unique([...fields.sort(), ...[...methods, ...macros].sort(), ...qualified]);
}

function fieldNames(v: CelValue): string[] {
  if (typeName(v) !== "map") return [];
  const json = toJson(v);
  return typeof json === "object" && json !== null
    ? Object.keys(json).filter((k) => /^[A-Za-z_]\w*$/.test(k))
    : [];
}

function unique(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}

/** File names for `:object pod<TAB>`; directories end with `/` so completion can go on into them. */
function completeFile(session: ReplSession, typed: string): Completion {
  const expanded = typed.startsWith("~/") ? `${homedir()}${typed.slice(1)}` : typed;
  const full = isAbsolute(expanded) ? expanded : resolve(session.cwd, expanded);
  const endsWithSlash = typed.endsWith("/") || typed === "";
  const dir = endsWithSlash ? full : dirname(full);
  const prefix = endsWithSlash ? "" : (typed.split("/").pop() ?? "");
  const typedDir = endsWithSlash ? typed : typed.slice(0, typed.length - prefix.length);
  let entries: { name: string; dir: boolean }[];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).map((d) => ({ name: d.name, dir: d.isDirectory() }));
  } catch {
    return [[], typed];
  }
  const hits = entries
    .filter((e) => e.name.startsWith(prefix) && (prefix.startsWith(".") || !e.name.startsWith(".")))
    .map((e) => join(typedDir, e.name) + (e.dir ? "/" : ""))
    .map((p) => (typed.startsWith("./") && !p.startsWith("./") ? `./${p}` : p))
    .sort();
  return [hits, typed];
}
