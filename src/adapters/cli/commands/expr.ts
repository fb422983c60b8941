/** `celgate expr`: evaluate one CEL expression (or a stream of them) against objects from files. */
import type { CelExtras } from "../../../cel/index.ts";
import { err, ok, type Result } from "../../../result.ts";
import { expressionJson, renderExpressionOutcome } from "../../output/value.ts";
import { HELP_OPTION, parseCommandArgs, usageError, userPath } from "../args.ts";
import { isJsonObject, readSingleDocument } from "../../input/documents.ts";
import {
  EXPRESSION_CONTEXTS,
  type ExpressionContext,
  evaluateExpression,
} from "../../../engine/expression.ts";
import { checkVariableNames, parseExtras } from "../expression.ts";
import { type CliIO, EXIT_OK, EXIT_OUTCOME, inputLines } from "../io.ts";
import { parseJson } from "../../../yaml/json-numbers.ts";

export const name = "expr";
export const summary = "evaluate a CEL expression against objects from files";
export const usage = "celgate expr [options] 'EXPRESSION'  |  celgate expr --batch [options] < lines.jsonl";
export const help = `Evaluate one CEL expression with the Kubernetes admission libraries.

usage: ${usage}

Options:
  --object FILE            bind 'object' (YAML or JSON)
  --old-object FILE        bind 'oldObject'
  --request FILE           bind 'request' (an AdmissionRequest, or an AdmissionReview whose
                           request is used; its object/oldObject are bound unless given)
  --params FILE            bind 'params'
  --namespace-object FILE  bind 'namespaceObject'
  --vars JSON              bind more top-level variables, e.g. --vars '{"n": 3}'
  --cel-extras LIST        enable non-Kubernetes CEL features: bind, math, base64 (or all)
  --env ENV                the environment to compile in: validating (default, a
                           ValidatingAdmissionPolicy's), mutating (a MutatingAdmissionPolicy's:
                           Object{...}, JSONPatch{...}, jsonpatch.escapeKey) or match (a webhook's
                           matchConditions: object, oldObject, request, authorizer)
  -o, --output FORMAT      text (default) or json
  --batch                  read JSON lines {"expr": "...", "vars": {...}} from stdin and write one
                           JSON line per input: {"value": V, "type": T} or {"error": E, "stage": S}
  -h, --help               show this help

Admission variables that are not given are bound to null. Values print as JSON: ints beyond 2^53
as decimal strings, bytes as base64, durations as "3600s", timestamps in RFC 3339.
Put '--' before an expression that starts with '-'.

Exit status: 0 evaluated, 1 the expression failed to compile or evaluate, 2 bad options or files.
In --batch mode per-line errors are written as data and the exit status is 0.

Examples:
  celgate expr '1 + 2'                               3 (int)
  celgate expr --object deploy.yaml 'object.spec.replicas <= 5'
  celgate expr -o json --vars '{"xs": [1, 2]}' 'xs.map(x, x * 2)'
  celgate expr --env mutating "jsonpatch.escapeKey('a/b')"   "a~1b" (string)
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    object: { type: "string" },
    "old-object": { type: "string" },
    request: { type: "string" },
    params: { type: "string" },
    "namespace-object": { type: "string" },
    vars: { type: "string" },
    "cel-extras": { type: "string" },
    env: { type: "string", default: "validating" },
    output: { type: "string", short: "o", default: "text" },
    batch: { type: "boolean" },
  },
  allowPositionals: true,
} as const;

const FILE_BINDINGS = [
  ["object", "object"],
  ["old-object", "oldObject"],
  ["request", "request"],
  ["params", "params"],
  ["namespace-object", "namespaceObject"],
] as const;

function parseVars(text: string, where: string): Result<Record<string, unknown>, string> {
  let vars: unknown;
  try {
    vars = parseJson(text);
  } catch (e) {
    return err(`${where} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!isJsonObject(vars)) return err(`${where} must be a JSON object of variable names to values`);
  const names = checkVariableNames(vars);
  return names.ok ? ok(vars) : names;
}

/** The bindings given by the file options; a request's object and oldObject fill in for absent ones. */
async function fileBindings(
  values: Partial<Record<(typeof FILE_BINDINGS)[number][0], string>>,
  io: CliIO,
): Promise<Result<Record<string, unknown>, string>> {
  const bindings: Record<string, unknown> = {};
  for (const [flag, variable] of FILE_BINDINGS) {
    const file = values[flag];
    if (file === undefined) continue;
    const doc = await readSingleDocument(userPath(io, file), { bigInts: true });
    if (!doc.ok) return doc;
    bindings[variable] = doc.value;
  }
  let request = bindings.request;
  if (isJsonObject(request) && request.kind === "AdmissionReview" && isJsonObject(request.request)) {
    request = request.request;
    bindings.request = request;
  }
  if (isJsonObject(request)) {
    for (const key of ["object", "oldObject"] as const)
      if (!(key in bindings) && key in request) bindings[key] = request[key];
  }
  return ok(bindings);
}

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values, positionals } = parsed;
  const fail = (message: string) => usageError(io, { name, usage }, message);

  const output = values.output;
  if (output !== "text" && output !== "json")
    return fail(`unknown output format '${output}'; expected text or json`);
  let extras: CelExtras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return fail(e.error);
    extras = e.value;
  }
  const context = values.env as ExpressionContext;
  if (!(EXPRESSION_CONTEXTS as readonly string[]).includes(context))
    return fail(`unknown environment '${values.env}'; expected ${EXPRESSION_CONTEXTS.join(", ")}`);
  if (values.batch) {
    if (positionals.length > 0) return fail("--batch reads expressions from stdin; give none as arguments");
  } else if (positionals.length !== 1) {
    return fail(positionals.length === 0 ? "missing the expression" : "give one expression (quote it)");
  }
  const files = await fileBindings(values, io);
  if (!files.ok) return fail(files.error);
  const bindings = files.value;
  if (values.vars !== undefined) {
    const vars = parseVars(values.vars, "--vars");
    if (!vars.ok) return fail(vars.error);
    const clash = Object.keys(vars.value).filter((k) => k in bindings);
    if (clash.length > 0) return fail(`--vars binds ${clash.join(", ")}, which a file option binds too`);
    Object.assign(bindings, vars.value);
  }

  if (values.batch) return batch(io, bindings, extras, context);
  const outcome = evaluateExpression(positionals[0] ?? "", bindings, extras, context);
  if (output === "json") io.stdout(`${JSON.stringify(expressionJson(outcome))}\n`);
  else if (outcome.ok) io.stdout(renderExpressionOutcome(outcome));
  else io.stderr(renderExpressionOutcome(outcome));
  return outcome.ok ? EXIT_OK : EXIT_OUTCOME;
}

/** One output line per non-blank input line, in order; a bad line is reported and skipped over. */
async function batch(
  io: CliIO,
  base: Record<string, unknown>,
  extras: CelExtras,
  context: ExpressionContext,
): Promise<number> {
  for await (const line of inputLines(io)) {
    if (line.trim() === "") continue;
    const input = parseBatchLine(line);
    const result = input.ok
      ? expressionJson(
          evaluateExpression(input.value.expr, { ...base, ...input.value.vars }, extras, context),
        )
      : { error: input.error, stage: "input" };
    io.stdout(`${JSON.stringify(result)}\n`);
  }
  return EXIT_OK;
}

function parseBatchLine(line: string): Result<{ expr: string; vars: Record<string, unknown> }, string> {
  let input: unknown;
  try {
    input = parseJson(line);
  } catch (e) {
    return err(`line is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!isJsonObject(input)) return err('line must be a JSON object {"expr": "...", "vars": {...}}');
  if (typeof input.expr !== "string") return err('"expr" must be a string');
  if (input.vars === undefined || input.vars === null) return ok({ expr: input.expr, vars: {} });
  if (!isJsonObject(input.vars)) return err('"vars" must be a JSON object');
  const names = checkVariableNames(input.vars);
  return names.ok ? ok({ expr: input.expr, vars: input.vars }) : names;
}
