/**
 * The state of one REPL session and what each line does to it: CEL expressions are evaluated
 * against the loaded admission context (object, request, params...), `:commands` change that
 * context, load policies or explain the last result. Knows nothing of terminals: `handle` takes a
 * complete input and gives back the text to show, so the interactive shell and piped scripts
 * (and the tests) share every behaviour.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { decodeAdmissionReview } from "../admission/codec.ts";
import { decodeSavedReview } from "../admission/saved.ts";
import {
  ADMISSION_VARIABLES,
  type Activation,
  type CelEnvironment,
  type CelExtras,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  PER_CALL_COST_LIMIT,
  type Program,
  run,
  typeName,
} from "../../cel/index.ts";
import { explainFalse, showValue } from "../../cel/index.ts";
import {
  contextEnvironment,
  type ExpressionContext,
  type ExpressionOutcome,
} from "../../engine/expression.ts";
import { type AdmissionRequest, DEFAULT_USER, OPERATIONS, type UserInfo } from "../../request/types.ts";
import type { Operation } from "../../policy/types.ts";
import { err, ok, type Result } from "../../result.ts";
import { isJsonObject, parseDocuments } from "../input/documents.ts";
import { admissionValues, type SessionBindings, sessionRequest } from "./bindings.ts";
import { bindingCommand, describeDocument, type Loaded, loadedLine, oneLine } from "./describe.ts";
import { formatResultsTable, type ResourceEvaluation } from "../output/results.ts";
import { evaluatePolicies } from "./policies.ts";
import { renderExpressionOutcome, renderValue } from "../output/value.ts";

/** What one input gave: text for the person (no trailing newline), whether it failed, whether to leave. */
export interface ReplReply {
  readonly text: string;
  readonly error: boolean;
  readonly quit?: boolean;
}

export interface SessionOptions {
  /** Relative file names are resolved against this directory. */
  readonly cwd: string;
  readonly extras?: CelExtras;
  /** The Kubernetes release to compile for (`--kubernetes-version`); the newest modelled when absent. */
  readonly kubernetesVersion?: string;
  /** Apply the API server's defaults to objects loaded from files (default true). */
  readonly defaults?: boolean;
  /** The environment expressions compile in (`--env`; engine/expression.ts); default validating. */
  readonly context?: ExpressionContext;
}

/** The last expression evaluated, for `:cost` and `:explain`. */
interface LastExpression {
  readonly kind: "expression";
  readonly source: string;
  readonly program: Program | undefined;
  readonly env: CelEnvironment;
  readonly activation: Activation;
  readonly outcome: ExpressionOutcome;
  readonly cost: number;
}

interface LastPolicy {
  readonly kind: "policy";
  readonly evaluation: ResourceEvaluation;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** CEL's reserved words and the literals, which cannot name a variable. */
const RESERVED: ReadonlySet<string> = new Set(
  "true false null in as break const continue else for function if import let loop package namespace return var void while".split(
    " ",
  ),
);
const EXPRESSION_TIMEOUT_MS = 10_000;

export interface ReplCommand {
  readonly name: string;
  readonly args: string;
  readonly summary: string;
  run(session: ReplSession, rest: string): Promise<ReplReply> | ReplReply;
}

const reply = (text: string): ReplReply => ({ text, error: false });
const failure = (text: string): ReplReply => ({ text, error: true });

/** The `:commands`, in the order `:help` lists them. Adding one is an entry here. */
export const REPL_COMMANDS: readonly ReplCommand[] = [
  {
    name: "object",
    args: "FILE",
    summary: "bind 'object' (YAML or JSON)",
    run: (s, rest) => s.loadBinding("object", rest),
  },
  {
    name: "old",
    args: "FILE",
    summary: "bind 'oldObject'",
    run: (s, rest) => s.loadBinding("oldObject", rest),
  },
  {
    name: "request",
    args: "FILE",
    summary: "bind 'request' from an AdmissionReview or a bare AdmissionRequest, with its objects",
    run: (s, rest) => s.loadRequest(rest),
  },
  {
    name: "review",
    args: "FILE",
    summary: "bind a saved AdmissionReview's request and objects, as serve would evaluate it",
    run: (s, rest) => s.loadReview(rest),
  },
  { name: "params", args: "FILE", summary: "bind 'params'", run: (s, rest) => s.loadBinding("params", rest) },
  {
    name: "namespace",
    args: "FILE",
    summary: "bind 'namespaceObject' (the Namespace of the request)",
    run: (s, rest) => s.loadBinding("namespaceObject", rest),
  },
  {
    name: "op",
    args: "OPERATION",
    summary: "set request.operation: CREATE, UPDATE, DELETE or CONNECT",
    run: (s, rest) => s.setOperation(rest),
  },
  {
    name: "user",
    args: "NAME [--groups G1,G2]",
    summary: "set request.userInfo",
    run: (s, rest) => s.setUser(rest),
  },
  {
    name: "let",
    args: "NAME = EXPR",
    summary: "bind NAME (also as variables.NAME) to the value of EXPR",
    run: (s, rest) => s.let(rest),
  },
  {
    name: "policy",
    args: "[--include-unbound] [PATH]",
    summary:
      "load policies (file or directory) and evaluate the bound ones against the context; no PATH: again",
    run: (s, rest) => s.policy(rest),
  },
  {
    name: "explain",
    args: "",
    summary: "why the last expression was false, or the trace of the last :policy",
    run: (s) => s.explain(),
  },
  { name: "cost", args: "", summary: "the CEL cost of the last expression", run: (s) => s.cost() },
  { name: "vars", args: "", summary: "what is bound", run: (s) => s.vars() },
  { name: "reset", args: "", summary: "unbind everything", run: (s) => s.reset() },
  { name: "help", args: "", summary: "this list", run: () => reply(helpText()) },
  {
    name: "quit",
    args: "",
    summary: "leave (also Ctrl-D)",
    run: () => ({ text: "", error: false, quit: true }),
  },
];

const ALIASES: Readonly<Record<string, string>> = { q: "quit", exit: "quit", h: "help", oldObject: "old" };

export function helpText(): string {
  const rows = REPL_COMMANDS.map((c) => [`:${c.name}${c.args ? ` ${c.args}` : ""}`, c.summary] as const);
  const width = Math.max(...rows.map(([a]) => a.length));
  return [
    "Type a CEL expression to see its value and type, e.g. object.spec.replicas <= 5",
    "An unfinished expression (open bracket or quote, trailing && or ||) continues on the next line.",
    "",
    ...rows.map(([a, s]) => `  ${a.padEnd(width)}  ${s}`),
  ].join("\n");
}

function findCommand(name: string): ReplCommand | undefined {
  const canonical = ALIASES[name] ?? name;
  return REPL_COMMANDS.find((c) => c.name === canonical);
}

export class ReplSession {
  private object: Loaded | undefined;
  private oldObject: Loaded | undefined;
  private params: Loaded | undefined;
  private namespaceObject: Loaded | undefined;
  /** The request as loaded (its objects are moved into `object`/`oldObject`). */
  private request: { value: AdmissionRequest; file: string } | undefined;
  private operation: Operation | undefined;
  private user: UserInfo | undefined;
  private readonly lets = new Map<string, CelValue>();
  private policyPath: string | undefined;
  private last: LastExpression | LastPolicy | undefined;
  readonly extras: CelExtras;
  readonly kubernetesVersion: string | undefined;
  readonly cwd: string;
  private readonly defaults: boolean;
  private readonly context: ExpressionContext;

  constructor(options: SessionOptions) {
    this.cwd = options.cwd;
    this.context = options.context ?? "validating";
    this.extras = options.extras ?? {};
    this.kubernetesVersion = options.kubernetesVersion;
    this.defaults = options.defaults ?? true;
  }

  /** Runs one complete input: a `:command` or a CEL expression. Never throws. */
  async handle(input: string): Promise<ReplReply> {
    const text = input.trim();
    // Blank lines and whole-line comments (`// ...`, or `# ...` in scripts) do nothing.
    if (text === "" || /^(\/\/|#)[^\n]*$/.test(text)) return reply("");
    try {
      if (text.startsWith(":")) {
        const m = /^:(\S*)\s*([\s\S]*)$/.exec(text);
        const name = m?.[1] ?? "";
        const cmd = findCommand(name);
        if (!cmd) return failure(`unknown command ':${name}'; :help lists the commands`);
        return await cmd.run(this, (m?.[2] ?? "").trim());
      }
      return this.evaluate(text);
    } catch (e) {
      return failure(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The context

  private path(file: string): string {
    const f = file.startsWith("~/") ? `${homedir()}${file.slice(1)}` : file;
    return isAbsolute(f) ? f : resolve(this.cwd, f);
  }

  private async readDocument(file: string): Promise<Result<unknown, string>> {
    if (file === "") return err("give a file name");
    const path = this.path(file);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (e) {
      return err(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const docs = parseDocuments(text, file);
    if (!docs.ok) return docs;
    if (docs.value.length !== 1)
      return err(`${file}: expected one YAML or JSON document, found ${docs.value.length}`);
    return ok(docs.value[0]?.value);
  }

  async loadBinding(
    name: "object" | "oldObject" | "params" | "namespaceObject",
    file: string,
  ): Promise<ReplReply> {
    const doc = await this.readDocument(file);
    if (!doc.ok) return failure(doc.error);
    const loaded = { value: doc.value, file };
    if (name === "object") this.object = loaded;
    else if (name === "oldObject") this.oldObject = loaded;
    else if (name === "params") this.params = loaded;
    else this.namespaceObject = loaded;
    return reply(`${name}: ${describeDocument(doc.value)}`);
  }

  async loadRequest(file: string): Promise<ReplReply> {
    const doc = await this.readDocument(file);
    if (!doc.ok) return failure(doc.error);
    const review =
      isJsonObject(doc.value) && doc.value.kind === "AdmissionReview"
        ? doc.value
        : { kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1", request: doc.value };
    const decoded = decodeAdmissionReview(review);
    if (!decoded.ok)
      return failure(`${file}: not an AdmissionReview or AdmissionRequest: ${decoded.error.reason}`);
    return this.bindRequest(decoded.value.request, file);
  }

  /** `:review`: a whole AdmissionReview, decoded as the webhook decodes one, nothing else. */
  async loadReview(file: string): Promise<ReplReply> {
    const doc = await this.readDocument(file);
    if (!doc.ok) return failure(doc.error);
    const decoded = decodeSavedReview(doc.value);
    if (!decoded.ok) return failure(`${file}: ${decoded.error}`);
    return this.bindRequest(decoded.value, file);
  }

  /** Binds a request as the API server built it, with its objects; `:op` and `:user` start over. */
  private bindRequest(r: AdmissionRequest, file: string): ReplReply {
    this.request = { value: r, file };
    this.object = r.object ? { value: r.object, file } : undefined;
    this.oldObject = r.oldObject ? { value: r.oldObject, file } : undefined;
    this.operation = undefined;
    this.user = undefined;
    const bound = ["request", ...(r.object ? ["object"] : []), ...(r.oldObject ? ["oldObject"] : [])];
    return reply(
      `${bound.join(", ")}: ${r.operation} ${r.kind.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name} by ${r.userInfo.username || "(no user)"}`,
    );
  }

  setOperation(text: string): ReplReply {
    const op = text.toUpperCase();
    if (!(OPERATIONS as readonly string[]).includes(op))
      return failure(`unknown operation '${text}'; expected ${OPERATIONS.join(", ")}`);
    this.operation = op as Operation;
    return reply(`request.operation: ${op}`);
  }

  setUser(text: string): ReplReply {
    const words = text.split(/\s+/).filter((w) => w !== "");
    let username: string | undefined;
    let groups: string[] | undefined;
    for (let i = 0; i < words.length; i++) {
      const w = words[i] as string;
      if (w === "--groups" || w.startsWith("--groups=")) {
        const value = w === "--groups" ? words[++i] : w.slice("--groups=".length);
        if (value === undefined) return failure("--groups needs a value: --groups dev,ops");
        groups = value
          .split(",")
          .map((g) => g.trim())
          .filter((g) => g !== "");
      } else if (w.startsWith("-"))
        return failure(`unknown option '${w}'; usage: :user NAME [--groups G1,G2]`);
      else if (username === undefined) username = w;
      else return failure("give one user name; usage: :user NAME [--groups G1,G2]");
    }
    if (username === undefined) return failure("usage: :user NAME [--groups G1,G2]");
    this.user = { username, groups: groups ?? [...DEFAULT_USER.groups] };
    return reply(`request.userInfo: ${username} [${this.user.groups.join(", ")}]`);
  }

  reset(): ReplReply {
    this.object = this.oldObject = this.params = this.namespaceObject = undefined;
    this.request = undefined;
    this.operation = undefined;
    this.user = undefined;
    this.lets.clear();
    this.last = undefined;
    return reply("everything unbound");
  }

  /** The admission request the context describes, as the API server would send it; absent without an object. */
  admissionRequest(): AdmissionRequest | undefined {
    const built = this.builtRequest();
    return built?.ok ? built.value : undefined;
  }

  /** What is bound, as bindings.ts reads it. */
  private bindings(): SessionBindings {
    const b: { -readonly [K in keyof SessionBindings]: SessionBindings[K] } = { defaults: this.defaults };
    if (this.object) b.object = this.object.value;
    if (this.oldObject) b.oldObject = this.oldObject.value;
    if (this.params) b.params = this.params.value;
    if (this.namespaceObject) b.namespaceObject = this.namespaceObject.value;
    if (this.request) b.request = this.request.value;
    if (this.operation) b.operation = this.operation;
    if (this.user) b.user = this.user;
    return b;
  }

  private builtRequest(): Result<AdmissionRequest, string> | undefined {
    return sessionRequest(this.bindings());
  }

  /** The admission variables as the engine binds them, plus the lets. */
  private values(): Record<string, CelValue> {
    const base = admissionValues(this.bindings(), this.admissionRequest());
    for (const [k, v] of this.lets) base[k] = v;
    return base;
  }

  /** The environment for expressions: the admission variables, the lets, and `variables.<let>`. */
  environment(): CelEnvironment {
    const { variables, structTypes } = contextEnvironment(this.context);
    return createEnvironment({
      variables: {
        ...variables,
        ...Object.fromEntries([...this.lets.keys()].map((k) => [k, "dyn"])),
      },
      policyVariables: [...this.lets.keys()],
      extras: this.extras,
      ...(structTypes ? { structTypes } : {}),
      ...(this.kubernetesVersion !== undefined ? { kubernetesVersion: this.kubernetesVersion } : {}),
    });
  }

  private activation(): Activation {
    const lets = this.lets;
    return {
      values: this.values(),
      variables: {
        get: (name) => {
          const v = lets.get(name);
          if (v === undefined) throw new Error(`no such variable: ${name}`);
          return v;
        },
      },
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Expressions

  /** Compiles and runs `source` in the current context, remembering it for `:cost` and `:explain`. */
  private run(source: string): LastExpression {
    const env = this.environment();
    const compiled = compile(source, env);
    const activation = this.activation();
    if (!compiled.ok) {
      const rendered = compiled.problems.map((p) => p.rendered).join("\n");
      return {
        kind: "expression",
        source,
        program: undefined,
        env,
        activation,
        outcome: { ok: false, stage: "compile", error: rendered, rendered },
        cost: 0,
      };
    }
    const state = new EvalState(PER_CALL_COST_LIMIT, performance.now() + EXPRESSION_TIMEOUT_MS);
    const r = run(compiled.program, activation, state);
    const outcome: ExpressionOutcome = r.ok
      ? { ok: true, value: r.value, type: typeName(r.value) }
      : { ok: false, stage: "eval", error: r.error.message, rendered: r.error.rendered };
    return { kind: "expression", source, program: compiled.program, env, activation, outcome, cost: r.cost };
  }

  private evaluate(source: string): ReplReply {
    const built = this.builtRequest();
    if (built && !built.ok) return failure(built.error);
    const last = this.run(source);
    this.last = last;
    return { text: renderExpressionOutcome(last.outcome).trimEnd(), error: !last.outcome.ok };
  }

  async let(text: string): Promise<ReplReply> {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)\s*([\s\S]+)$/.exec(text);
    if (!m) return failure("usage: :let NAME = EXPRESSION");
    const name = m[1] as string;
    if (!IDENTIFIER.test(name) || RESERVED.has(name)) return failure(`'${name}' is a reserved word`);
    if (name in ADMISSION_VARIABLES || name === "variables")
      return failure(`'${name}' is an admission variable; load it with :${bindingCommand(name)}`);
    const last = this.run(m[2] as string);
    this.last = last;
    if (!last.outcome.ok) return failure(renderExpressionOutcome(last.outcome).trimEnd());
    this.lets.set(name, last.outcome.value);
    return reply(`${name} = ${renderValue(last.outcome.value, last.outcome.type)}`);
  }

  cost(): ReplReply {
    const last = this.last;
    if (last?.kind !== "expression") return failure("no expression evaluated yet");
    return reply(
      `${last.cost} (cost of ${oneLine(last.source)}; Kubernetes allows ${PER_CALL_COST_LIMIT.toLocaleString("en-US")} per expression)`,
    );
  }

  explain(): ReplReply {
    const last = this.last;
    if (!last) return failure("nothing evaluated yet");
    if (last.kind === "policy")
      return reply(formatResultsTable([last.evaluation], { explain: true }).trimEnd());
    const o = last.outcome;
    const head = `${oneLine(last.source)} → ${o.ok ? showValue(o.value) : `error: ${o.error.split("\n")[0]}`} (cost ${last.cost})`;
    if (!o.ok || o.value !== false || !last.program) return reply(head);
    const reasons = explainFalse(last.program.parsed, last.env, last.activation);
    return reply([head, ...reasons.map((r) => `  because ${r}`)].join("\n"));
  }

  // ---------------------------------------------------------------------------------------------
  // Policies

  async policy(rest: string): Promise<ReplReply> {
    // As eval: only what a binding names, unless asked (the API server evaluates nothing else).
    const flag = /^--include-unbound(?:\s+|$)/.exec(rest);
    const path = flag ? rest.slice(flag[0].length) : rest;
    const target = path === "" ? this.policyPath : path;
    if (target === undefined) return failure("usage: :policy PATH (a policy file or a directory of them)");
    const built = this.builtRequest();
    if (built && !built.ok) return failure(built.error);
    const request = built?.value;
    if (!request)
      return failure(
        "no request to evaluate: load a Kubernetes object with :object FILE or a request with :request FILE",
      );
    const ns = this.namespaceObject?.value;
    const run = await evaluatePolicies(
      {
        policyPath: this.path(target),
        ...(this.params ? { paramsPath: this.path(this.params.file) } : {}),
        request,
        ...(isJsonObject(ns) ? { namespaceObject: ns } : {}),
        extras: this.extras,
        defaults: this.defaults,
        ...(this.kubernetesVersion !== undefined ? { kubernetesVersion: this.kubernetesVersion } : {}),
        ...(flag ? { includeUnbound: true } : {}),
      },
      target,
    );
    if (!run.ok) return failure(run.error);
    this.policyPath = target;
    const { evaluation, report } = run.value;
    this.last = { kind: "policy", evaluation };
    const table = formatResultsTable([evaluation]).trimEnd();
    return reply(report ? `${report}\n${table}` : table);
  }

  // ---------------------------------------------------------------------------------------------
  // What is bound

  vars(): ReplReply {
    const request = this.admissionRequest();
    const rows: [string, string][] = [
      ["object", loadedLine(this.object)],
      ["oldObject", loadedLine(this.oldObject)],
      [
        "request",
        request
          ? `${request.operation} ${request.kind.kind} ${request.namespace ? `${request.namespace}/` : ""}${request.name} by ${request.userInfo.username} [${request.userInfo.groups.join(", ")}]${this.request ? ` (from ${this.request.file})` : ""}`
          : this.operation || this.user
            ? `${this.operation ?? ""}${this.user ? ` by ${this.user.username}` : ""}`.trim()
            : "null",
      ],
      ["params", loadedLine(this.params)],
      ["namespaceObject", loadedLine(this.namespaceObject)],
      ...[...this.lets].map(([k, v]): [string, string] => [k, renderValue(v).replace(/\s*\n\s*/g, " ")]),
    ];
    const width = Math.max(...rows.map(([k]) => k.length));
    return reply(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n"));
  }

  // ---------------------------------------------------------------------------------------------
  // For completion

  /** Names an expression can start with: the variables and the lets. */
  variableNames(): string[] {
    return [
      ...Object.keys(ADMISSION_VARIABLES).filter((k) => !k.includes(".")),
      ...this.lets.keys(),
      ...(this.lets.size > 0 ? ["variables"] : []),
    ];
  }

  /** The value of a short path expression (`object.spec`) in the context, for completing its fields. */
  peek(source: string): CelValue | undefined {
    const env = this.environment();
    const compiled = compile(source, env);
    if (!compiled.ok) return undefined;
    const r = run(compiled.program, this.activation(), new EvalState(10_000, performance.now() + 200));
    return r.ok ? r.value : undefined;
  }

  letNames(): string[] {
    return [...this.lets.keys()];
  }
}
