/** `celgate repl`: an interactive CEL shell over an admission context, or a runner of piped scripts. */
import { EXPRESSION_CONTEXTS, type ExpressionContext } from "../../../engine/expression.ts";
import { homedir } from "node:os";
import { join } from "node:path";
import { runInteractive, runScript } from "../../repl/shell.ts";
import { ReplSession } from "../../repl/session.ts";
import { DEFAULT_RELEASE, NEWEST_RELEASE, OLDEST_RELEASE } from "../../../cel/index.ts";
import {
  HELP_OPTION,
  KUBERNETES_VERSION_OPTION,
  kubernetesVersionOf,
  parseCommandArgs,
  usageError,
} from "../args.ts";
import { parseExtras } from "../expression.ts";
import { type CliIO, EXIT_USAGE, inputLines } from "../io.ts";

export const name = "repl";
export const summary = "an interactive CEL shell with the admission variables";
export const usage = "celgate repl [options]  |  celgate repl [options] < script.cel";
export const help = `An interactive CEL shell with the Kubernetes admission libraries and variables.

usage: ${usage}

Options:
  --object FILE            bind 'object' first (as :object FILE does)
  --old-object FILE        bind 'oldObject'
  --request FILE           bind 'request' (an AdmissionReview or an AdmissionRequest)
  --params FILE            bind 'params'
  --namespace-object FILE  bind 'namespaceObject'
  --cel-extras LIST        enable non-Kubernetes CEL features: bind, math, base64 (or all)
  --env ENV                compile expressions as a ValidatingAdmissionPolicy's (validating, the
                           default), a MutatingAdmissionPolicy's (mutating: Object{...},
                           JSONPatch{...}, jsonpatch.escapeKey) or a webhook matchCondition's (match)
  --kubernetes-version X.Y compile as Kubernetes X.Y would (${OLDEST_RELEASE} to ${NEWEST_RELEASE}; default ${DEFAULT_RELEASE}); see
                           'celgate help check'
  --no-defaults            bind objects as written, without the defaults the API server applies
                           before admission
  -h, --help               show this help

Objects loaded from files are bound as admission sees them: in the request's namespace and, for
built-in kinds, with the API server's defaults (Kubernetes ${DEFAULT_RELEASE}); a loaded request or review is
bound as it is. Type a CEL expression to see its value and type ('3 (int)'); errors point at the expression
with a caret. An unfinished expression (open bracket or quote, trailing && or ||) continues on
the next line. Commands start with ':' (:help lists them): :object FILE, :old FILE,
:request FILE, :review FILE, :params FILE, :namespace FILE, :op UPDATE, :user alice --groups dev,ops,
:let name = expr, :policy PATH, :explain, :cost, :vars, :reset, :help, :quit.

Tab completes commands, file names, variables, functions, and the fields of loaded objects
(object.spec.con<TAB>). History is kept in ~/.celgate_history, or in the file named by
CELGATE_HISTORY (set it empty to keep none).

With standard input not a terminal, the lines are run as a script: each result is printed to
stdout, each error to stderr, without prompts. Lines starting with '#' or '//' are comments.

Exit status: 0; for a script, 1 when any line failed (an expression that did not compile or
evaluate, a command that could not be done), 2 bad options or files.
`;

const OPTIONS = {
  options: {
    ...HELP_OPTION,
    object: { type: "string" },
    "old-object": { type: "string" },
    request: { type: "string" },
    params: { type: "string" },
    "namespace-object": { type: "string" },
    "cel-extras": { type: "string" },
    env: { type: "string", default: "validating" },
    ...KUBERNETES_VERSION_OPTION,
    "no-defaults": { type: "boolean" },
  },
  allowPositionals: false,
} as const;

/** The loading commands the options stand for, in an order where the request comes first. */
const PRELOAD = [
  ["request", "request"],
  ["object", "object"],
  ["old-object", "old"],
  ["params", "params"],
  ["namespace-object", "namespace"],
] as const;

const BANNER = "celgate repl: CEL with the Kubernetes libraries. :help lists the commands, :quit leaves.";

export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({ name, usage, help }, args, OPTIONS, io);
  if (typeof parsed === "number") return parsed;
  const { values } = parsed;
  let extras = {};
  if (values["cel-extras"] !== undefined) {
    const e = parseExtras(values["cel-extras"]);
    if (!e.ok) return usageError(io, { name, usage }, e.error);
    extras = e.value;
  }
  const release = kubernetesVersionOf(values["kubernetes-version"]);
  if (!release.ok) return usageError(io, { name, usage }, release.error);
  const context = values.env as ExpressionContext;
  if (!(EXPRESSION_CONTEXTS as readonly string[]).includes(context))
    return usageError(
      io,
      { name, usage },
      `unknown environment '${values.env}'; expected ${EXPRESSION_CONTEXTS.join(", ")}`,
    );
  const session = new ReplSession({
    cwd: io.cwd,
    extras,
    context,
    defaults: !values["no-defaults"],
    ...(release.value !== undefined ? { kubernetesVersion: release.value } : {}),
  });
  for (const [flag, command] of PRELOAD) {
    const file = values[flag];
    if (file === undefined) continue;
    const r = await session.handle(`:${command} ${file}`);
    if (r.error) {
      io.stderr(`celgate repl: ${r.text}\n`);
      return EXIT_USAGE;
    }
  }
  // node:repl needs the process's own streams (line editing, raw mode); CliIO carries text only,
  // so a session is interactive only when the real stdin and stdout are both terminals.
  if (io.isTTY && process.stdin.isTTY === true) {
    const history = io.env.CELGATE_HISTORY ?? join(io.env.HOME ?? homedir(), ".celgate_history");
    return runInteractive(session, {
      input: process.stdin,
      output: process.stdout,
      ...(history !== "" ? { historyFile: history } : {}),
      banner: BANNER,
    });
  }
  return runScript(session, inputLines(io), io);
}
