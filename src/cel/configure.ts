/**
 * The evaluator's process-wide settings. Nothing here happens when a module is imported: an entry
 * point (the CLI's bin.ts, the bench, a test) calls `configureRuntime` once, before it compiles
 * anything. Without that call the evaluator is correct and safe: programs switch to generated code
 * on their second run ("lazy"), and only very long generated functions run slower, unoptimized.
 */
import v8 from "node:v8";

/** When programs switch to generated code. */
export type CodegenMode = "lazy" | "always" | "never";

export interface RuntimeOptions {
  /**
   * Generation costs tens of microseconds an expression, so by default ("lazy") a program is
   * generated on its second run: policies that are loaded and never asked (most of a large set,
   * since the index skips them) or run once (the CLI) never pay. "always" generates on the first
   * run, "never" keeps the closures.
   */
  readonly codegen?: CodegenMode;
  /**
   * V8 optimizes no function with more than 60 KB of bytecode (`--max-optimized-bytecode-size`),
   * and a generated function passes that at about eight Pod Security rules joined by `&&` in one
   * expression: it then runs unoptimized, several times slower. Raising the limit (to 512 KB) is
   * process-wide, for every function; Node's own are far below either limit. TurboFan then
   * compiles such an expression once, on its background thread.
   */
  readonly raiseBytecodeLimit?: boolean;
}

/** The environment variable that chooses the codegen mode for the `celgate` command (docs/policy-format.md, "Evaluation"). */
export const CODEGEN_ENV = "CELGATE_CEL_CODEGEN";

/** The mode a `CELGATE_CEL_CODEGEN` value names; undefined when it names none (the CLI warns then). */
export function codegenModeFrom(v: string | undefined): CodegenMode | undefined {
  return v === "lazy" || v === "always" || v === "never" ? v : undefined;
}

/**
 * The settings a program serving or checking policies runs with: the codegen mode from
 * `CELGATE_CEL_CODEGEN` (lazy when unset or unknown) and the raised bytecode limit.
 */
export function runtimeOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): RuntimeOptions {
  return { codegen: codegenModeFrom(env[CODEGEN_ENV]) ?? "lazy", raiseBytecodeLimit: true };
}

let mode: CodegenMode = "lazy";
let bytecodeLimitRaised = false;

/** Applies the settings given; those left out keep their value. */
export function configureRuntime(options: RuntimeOptions): void {
  if (options.codegen !== undefined) mode = options.codegen;
  if (options.raiseBytecodeLimit === true && !bytecodeLimitRaised) {
    v8.setFlagsFromString("--max-optimized-bytecode-size=524288");
    bytecodeLimitRaised = true;
  }
}

/** Sets the codegen mode and returns the one it replaces (tests switch tiers and switch back). */
export function setCodegenMode(m: CodegenMode): CodegenMode {
  const before = mode;
  mode = m;
  return before;
}

export function codegenMode(): CodegenMode {
  return mode;
}
