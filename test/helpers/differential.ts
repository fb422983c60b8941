/**
 * Differential testing of our CEL engine against @bufbuild/cel's interpreter (`parse` + `plan`), the
 * reference it replaced: run one expression both ways with the same bindings, reduce both results to
 * a canonical text (type-tagged values, map key order ignored) or "error", and classify the pair as
 * agreeing, not comparable (with a reason), or disagreeing.
 */
import {
  type CelInput,
  celEnv,
  celUint,
  isCelError,
  isCelList,
  isCelMap,
  isCelType,
  isCelUint,
  parse,
  plan,
} from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { create } from "@bufbuild/protobuf";
import { isReflectMessage } from "@bufbuild/protobuf/reflect";
import { DurationSchema, TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  type Activation,
  type CelEnvironment,
  type CelExtras,
  type CelValue,
  compile,
  createEnvironment,
  EvalState,
  run,
  type VariableResolver,
} from "../../src/cel/index.ts";
import {
  CelError,
  CelMap,
  CelObject,
  CelType,
  Duration,
  isPlainMap,
  type MapKey,
  mapEntries,
  Optional,
  Timestamp,
  UInt,
} from "../../src/cel/runtime/values.ts";

// ---------------------------------------------------------------------------------------------
// Canonical forms.

/** The outcome of one engine on one case, reduced to what the two engines must share. */
export type Outcome =
  | { readonly kind: "value"; readonly repr: string }
  | {
      readonly kind: "error";
      /** parse/compile: rejected before evaluation; eval: a CEL error; crash: a JavaScript exception. */
      readonly stage: "parse" | "compile" | "eval" | "crash";
      readonly message: string;
      /** Ours only: the compile problem's code, to tell static type errors from unknown names. */
      readonly code?: string;
    };

const NS = 1_000_000_000n;

function canonDouble(n: number): string {
  if (Number.isNaN(n)) return "double(NaN)";
  // CEL has -0.0 == 0.0; which zero an engine returns is not a semantic difference.
  return `double(${Object.is(n, -0) ? 0 : n})`;
}

function canonBytes(b: Uint8Array): string {
  return `b"${Buffer.from(b).toString("hex")}"`;
}

function canonMap(entries: Iterable<readonly [string, string]>): string {
  // Sorted by canonical key: map equality ignores order.
  const parts = [...entries].map(([k, v]) => `${k}:${v}`).sort();
  return `{${parts.join(",")}}`;
}

/** Our value → canonical text. */
export function canonOurs(v: CelValue): string {
  switch (typeof v) {
    case "boolean":
      return `bool(${v})`;
    case "bigint":
      return `int(${v})`;
    case "number":
      return canonDouble(v);
    case "string":
      return JSON.stringify(v);
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) return `[${v.map(canonOurs).join(",")}]`;
      if (v instanceof CelMap || isPlainMap(v))
        return canonMap([...mapEntries(v)].map(([k, x]) => [canonOurs(k), canonOurs(x)] as const));
      if (v instanceof UInt) return `uint(${v.value})`;
      if (v instanceof Uint8Array) return canonBytes(v);
      if (v instanceof Duration) return `duration(${v.nanos})`;
      if (v instanceof Timestamp) return `timestamp(${v.nanos})`;
      if (v instanceof CelType) return `type(${v.name})`;
      if (v instanceof Optional) return v.hasValue() ? `optional(${canonOurs(v.value())})` : "optional.none";
      if (v instanceof CelObject) return `${v.celType}(${JSON.stringify(v.toJSON())})`;
      return `unknown(${String(v)})`;
    }
    default:
      return `unknown(${String(v)})`;
  }
}

/** A @bufbuild/cel result → canonical text, in the same vocabulary as {@link canonOurs}. */
export function canonBuf(v: unknown): string {
  switch (typeof v) {
    case "boolean":
      return `bool(${v})`;
    case "bigint":
      return `int(${v})`;
    case "number":
      return canonDouble(v);
    case "string":
      return JSON.stringify(v);
    case "object": {
      if (v === null) return "null";
      if (isCelUint(v)) return `uint(${v.value})`;
      if (v instanceof Uint8Array) return canonBytes(v);
      if (isCelList(v)) return `[${[...v].map(canonBuf).join(",")}]`;
      if (isCelMap(v)) return canonMap([...v.entries()].map(([k, x]) => [canonBuf(k), canonBuf(x)] as const));
      if (isCelType(v)) return `type(${v.name})`;
      if (isReflectMessage(v)) {
        const m = v.message as { $typeName: string; seconds?: bigint; nanos?: number };
        const nanos = (m.seconds ?? 0n) * NS + BigInt(m.nanos ?? 0);
        if (m.$typeName === "google.protobuf.Duration") return `duration(${nanos})`;
        if (m.$typeName === "google.protobuf.Timestamp") return `timestamp(${nanos})`;
        return `message(${m.$typeName})`;
      }
      return `unknown(${Object.prototype.toString.call(v)})`;
    }
    default:
      return `unknown(${String(v)})`;
  }
}

/** Our value → @bufbuild/cel input with the same CEL type (ints stay ints: no JSON number loss). */
export function toBufInput(v: CelValue): CelInput {
  if (v === null || typeof v !== "object") return v as CelInput;
  if (Array.isArray(v)) return v.map(toBufInput);
  if (v instanceof CelMap || isPlainMap(v)) {
    const m = new Map<string | bigint | boolean | ReturnType<typeof celUint>, CelInput>();
    for (const [k, x] of mapEntries(v)) m.set(bufKey(k), toBufInput(x));
    return m;
  }
  if (v instanceof UInt) return celUint(v.value);
  if (v instanceof Uint8Array) return v;
  if (v instanceof Duration) return create(DurationSchema, splitNanos(v.nanos)) as unknown as CelInput;
  if (v instanceof Timestamp) return create(TimestampSchema, splitNanos(v.nanos)) as unknown as CelInput;
  throw new NotComparable(`binding of type ${v.constructor.name} has no @bufbuild/cel form`);
}

function bufKey(k: MapKey): string | bigint | boolean | ReturnType<typeof celUint> {
  return k instanceof UInt ? celUint(k.value) : k;
}

/** protobuf's form: seconds and a nanos part of the same sign. */
function splitNanos(n: bigint): { seconds: bigint; nanos: number } {
  return { seconds: n / NS, nanos: Number(n % NS) };
}

export class NotComparable extends Error {}

// ---------------------------------------------------------------------------------------------
// Running one case both ways.

export interface DiffCase {
  readonly source: string;
  /** Top-level variables (declared `dyn` on both sides). */
  readonly bindings: Readonly<Record<string, CelValue>>;
  /**
   * A policy's `variables`, as our engine computed them: a value, or the error it raised. Ours reads
   * them through its resolver; @bufbuild/cel sees the values as a map variable named `variables`.
   */
  readonly variables?: ReadonlyMap<string, CelValue | CelError>;
  /** Object/JSONPatch struct literals allowed (mutations). */
  readonly structTypes?: readonly string[];
}

export type Verdict =
  | { readonly status: "agree"; readonly ours: Outcome; readonly theirs: Outcome }
  | { readonly status: "skip"; readonly reason: string; readonly ours: Outcome; readonly theirs: Outcome }
  | { readonly status: "disagree"; readonly ours: Outcome; readonly theirs: Outcome };

export interface DifferOptions {
  readonly extras?: CelExtras;
  /** Ours's cost limit: high, so that a cost overrun (which @bufbuild/cel has no notion of) is rare. */
  readonly costLimit?: number;
}

/** @bufbuild/cel's functions: a name ours does not know but bufbuild does is a gap in ours, not a design choice. */
const BUF_FUNCS = celEnv({ funcs: strings }).funcs;

type BufProgram = (ctx: Record<string, CelInput>) => unknown;

const OPTIONAL_SYNTAX = /\.\?|\[\?|\{\s*\?|,\s*\?/;

/** Runs cases through both engines, caching environments and @bufbuild/cel plans by source. */
export class Differ {
  private readonly envs = new Map<string, CelEnvironment>();
  private readonly bufPlans = new Map<string, BufProgram | Outcome>();
  private readonly extras: CelExtras;
  private readonly costLimit: number;

  constructor(options: DifferOptions = {}) {
    this.extras = options.extras ?? { bind: true, math: true, base64: true };
    this.costLimit = options.costLimit ?? 100_000_000;
  }

  private env(
    names: readonly string[],
    policyVariables: readonly string[] | undefined,
    structs: readonly string[],
  ) {
    const key = JSON.stringify([names, policyVariables, structs]);
    let env = this.envs.get(key);
    if (!env) {
      env = createEnvironment({
        variables: Object.fromEntries(names.map((n) => [n, "dyn"])),
        ...(policyVariables ? { policyVariables } : {}),
        structTypes: structs,
        extras: this.extras,
        // Both engines' run-time semantics, on expressions a type checker may refuse: unchecked.
        checks: "none",
      });
      this.envs.set(key, env);
    }
    return env;
  }

  /** Our engine: compile against an environment declaring exactly the bound names, then run. */
  ours(c: DiffCase): Outcome {
    const r = this.runOurs(c);
    if ("value" in r) return { kind: "value", repr: canonOurs(r.value) };
    return r.error;
  }

  /** Our engine's raw result, or its failure as a CelError (what a policy variable holds then). */
  evaluateOurs(c: DiffCase): CelValue | CelError {
    const r = this.runOurs(c);
    return "value" in r ? r.value : new CelError(r.error.message);
  }

  private runOurs(c: DiffCase): { value: CelValue } | { error: Outcome & { kind: "error" } } {
    const names = Object.keys(c.bindings).sort();
    const env = this.env(names, c.variables ? [...c.variables.keys()] : undefined, c.structTypes ?? []);
    const compiled = compile(c.source, env);
    if (!compiled.ok) {
      const p = compiled.problems[0];
      return {
        error: {
          kind: "error",
          stage: p?.code === "PE_CEL_PARSE" ? "parse" : "compile",
          message: p?.message ?? "compile error",
          ...(p ? { code: p.code } : {}),
        },
      };
    }
    const vars = c.variables;
    const resolver: VariableResolver | undefined = vars && {
      get(name: string): CelValue {
        const v = vars.get(name);
        if (v === undefined) throw new CelError(`no such variable: ${name}`);
        if (v instanceof CelError) throw v;
        return v;
      },
    };
    const act: Activation = resolver ? { values: c.bindings, variables: resolver } : { values: c.bindings };
    const r = run(compiled.program, act, new EvalState(this.costLimit, performance.now() + 5_000));
    if (r.ok) return { value: r.value };
    return {
      error: {
        kind: "error",
        stage: r.error.message.startsWith("internal error") ? "crash" : "eval",
        message: r.error.message,
      },
    };
  }

  private bufPlan(source: string): BufProgram | Outcome {
    let p = this.bufPlans.get(source);
    if (p === undefined) {
      try {
        p = plan(celEnv({ funcs: strings }), parse(source)) as unknown as BufProgram;
      } catch (e) {
        p = { kind: "error", stage: "parse", message: e instanceof Error ? e.message : String(e) };
      }
      this.bufPlans.set(source, p);
    }
    return p;
  }

  /** @bufbuild/cel: parse + plan in its standard environment plus its strings extension. */
  theirs(c: DiffCase): Outcome {
    const p = this.bufPlan(c.source);
    if (typeof p !== "function") return p;
    const input: Record<string, CelInput> = {};
    for (const [k, v] of Object.entries(c.bindings)) input[k] = toBufInput(v);
    if (c.variables) {
      const m = new Map<string, CelInput>();
      for (const [k, v] of c.variables) if (!(v instanceof CelError)) m.set(k, toBufInput(v));
      input.variables = m;
    }
    let r: unknown;
    try {
      r = p(input);
    } catch (e) {
      return { kind: "error", stage: "crash", message: e instanceof Error ? e.message : String(e) };
    }
    if (isCelError(r)) return { kind: "error", stage: "eval", message: r.message };
    try {
      return { kind: "value", repr: canonBuf(r) };
    } catch (e) {
      return { kind: "error", stage: "crash", message: `result not readable: ${String(e)}` };
    }
  }

  check(c: DiffCase): Verdict {
    const ours = this.ours(c);
    let theirs: Outcome;
    try {
      theirs = this.theirs(c);
    } catch (e) {
      if (!(e instanceof NotComparable)) throw e;
      return {
        status: "skip",
        reason: e.message,
        ours,
        theirs: { kind: "error", stage: "crash", message: e.message },
      };
    }
    return classify(c.source, ours, theirs);
  }
}

/**
 * Equal values, or errors on both sides, agree (error texts differ between engines by design).
 * A mismatch is "not comparable" only for what the engines differ on deliberately; anything else
 * is a disagreement.
 */
/**
 * The fault an evaluation error names, where both engines' wordings tell it: errors naming
 * different faults failed at different places (as when `a && b` reported b's error where cel-go
 * reports a's). Undefined when the message names none of these.
 */
export function fault(message: string): string | undefined {
  if (/by zero/.test(message)) return "division by zero";
  // @bufbuild/cel words a missing map key as an index out of bounds.
  if (/no such key|no such field|index/.test(message)) return "missing key or index";
  if (/overflow|out of range/.test(message)) return "out of range";
  if (/overload|type mismatch/.test(message)) return "no overload";
  return undefined;
}

export function classify(source: string, ours: Outcome, theirs: Outcome): Verdict {
  if (ours.kind === "value" && theirs.kind === "value")
    return ours.repr === theirs.repr
      ? { status: "agree", ours, theirs }
      : { status: "disagree", ours, theirs };
  if (ours.kind === "error" && theirs.kind === "error") {
    // A crash is never an acceptable "error": it is a bug in the engine that crashed.
    if (ours.stage === "crash" || theirs.stage === "crash") return { status: "disagree", ours, theirs };
    if (ours.stage === "eval" && theirs.stage === "eval") {
      const [a, b] = [fault(ours.message), fault(theirs.message)];
      if (a !== undefined && b !== undefined && a !== b) return { status: "disagree", ours, theirs };
    }
    return { status: "agree", ours, theirs };
  }
  const reason = skipReason(source, ours, theirs);
  return reason === undefined
    ? { status: "disagree", ours, theirs }
    : { status: "skip", reason, ours, theirs };
}

function skipReason(source: string, ours: Outcome, theirs: Outcome): string | undefined {
  if (theirs.kind === "error") {
    if (theirs.stage === "parse" && OPTIONAL_SYNTAX.test(source))
      return "@bufbuild/cel cannot parse the optional syntax (.? [? {?)";
    const unbound = /unbound function: ([\w.]+)/.exec(theirs.message);
    if (theirs.stage === "eval" && unbound) return `@bufbuild/cel lacks function '${unbound[1]}'`;
    if (theirs.stage === "eval" && /^unknown type: (?:Object|JSONPatch)\b/.test(theirs.message))
      return "@bufbuild/cel lacks the mutation struct types (Object, JSONPatch)";
  }
  const undeclared = ours.kind === "error" ? /^undeclared reference to '([\w.]+)'/.exec(ours.message) : null;
  if (
    ours.kind === "error" &&
    ours.stage === "compile" &&
    undeclared &&
    BUF_FUNCS.find(undeclared[1] ?? "") === undefined
  )
    return "ours rejects an undeclared name when compiling (checked, as in Kubernetes); @bufbuild/cel only if it is evaluated";
  if (
    ours.kind === "error" &&
    ours.stage === "compile" &&
    (ours.code === "PE_CEL_TYPE" || ours.message.startsWith("found no matching overload"))
  )
    return "ours type-checks (static overload error, as Kubernetes' checker); @bufbuild/cel evaluates unchecked";
  return undefined;
}

export function describeOutcome(o: Outcome): string {
  return o.kind === "value" ? o.repr : `error (${o.stage}): ${o.message}`;
}

/** A one-line description of a binding set, for reports. */
export function describeBindings(b: Readonly<Record<string, CelValue>>): string {
  const parts = Object.entries(b).map(([k, v]) => {
    const s = canonOurs(v);
    return `${k}=${s.length > 120 ? `${s.slice(0, 117)}...` : s}`;
  });
  return parts.length ? parts.join(" ") : "(none)";
}

// ---------------------------------------------------------------------------------------------
// Tallies.

export interface Disagreement {
  /** Where the case comes from (conformance test path, policy expression and suite case...). */
  readonly key: string;
  readonly source: string;
  readonly verdict: Verdict;
  /** Expression, bindings and both outcomes, for reports. */
  readonly detail: string;
}

export interface Tally {
  compared: number;
  agreed: number;
  readonly skipped: Map<string, number>;
  readonly disagreements: Disagreement[];
}

export function newTally(): Tally {
  return { compared: 0, agreed: 0, skipped: new Map(), disagreements: [] };
}

/** Records a verdict; `key` identifies the case in the known-disagreement table. */
export function record(t: Tally, key: string, c: DiffCase, v: Verdict): void {
  if (v.status === "skip") {
    t.skipped.set(v.reason, (t.skipped.get(v.reason) ?? 0) + 1);
    return;
  }
  t.compared++;
  if (v.status === "agree") {
    t.agreed++;
    return;
  }
  t.disagreements.push({
    key,
    source: c.source,
    verdict: v,
    detail: `${c.source}\n  bindings: ${describeBindings(c.bindings)}${
      c.variables ? ` variables=${[...c.variables.keys()].join(",")}` : ""
    }\n  ours:     ${describeOutcome(v.ours)}\n  bufbuild: ${describeOutcome(v.theirs)}`,
  });
}

export function skippedTotal(t: Tally): number {
  let n = 0;
  for (const c of t.skipped.values()) n += c;
  return n;
}

export function summary(name: string, t: Tally): string {
  const lines = [
    `${name}: compared ${t.compared}, agreed ${t.agreed}, disagreements ${t.disagreements.length}, skipped ${skippedTotal(t)}`,
  ];
  for (const [reason, n] of [...t.skipped].sort((a, b) => b[1] - a[1]))
    lines.push(`  skipped ${n}: ${reason}`);
  return lines.join("\n");
}
