/** Strict option parsing shared by every command: unknown flags are usage errors that name the flag. */
import { isAbsolute, resolve } from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type CelExtras, parseRelease } from "../../cel/index.ts";
import type { CompileOptions } from "../../compile/policy.ts";
import { closestName } from "../../policy/fields.ts";
import { type CliIO, type Command, EXIT_OK, EXIT_USAGE } from "./io.ts";

/** Every command accepts `--help` / `-h`. */
export const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** Writes a usage error: what is wrong, the synopsis, and where to find the options. */
export function usageError(io: CliIO, command: Pick<Command, "name" | "usage">, message: string): number {
  io.stderr(
    `celgate ${command.name}: ${message}\nusage: ${command.usage}\nRun 'celgate help ${command.name}' for the options.\n`,
  );
  return EXIT_USAGE;
}

/**
 * ` did you mean '--output'?` for a misspelt long option (`--outptu`), from the command's own
 * options; empty when none is close enough to be a likely typo.
 */
export function optionSuggestion(option: string, known: readonly string[]): string {
  if (!option.startsWith("--")) return "";
  const near = closestName(option.slice(2), known);
  return near === undefined ? "" : `; did you mean '--${near}'?`;
}

/** Node's parseArgs messages end with advice about `--`; the first sentence is what people need. */
function describeParseError(e: Error, known: readonly string[]): string {
  const code = (e as { code?: string }).code;
  const unknown = /^Unknown option '([^']+)'/.exec(e.message);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown?.[1] !== undefined)
    return `unknown option '${unknown[1]}'${optionSuggestion(unknown[1], known)}`;
  const first = e.message.split(/\.\s/)[0] ?? e.message;
  return first.charAt(0).toLowerCase() + first.slice(1).replace(/\.$/, "");
}

/**
 * Parses a command's arguments strictly. Returns the parsed values, or the exit code when the
 * command is already answered: `--help` printed (0) or a usage error reported (2).
 */
export function parseCommandArgs<T extends ParseArgsConfig>(
  command: Pick<Command, "name" | "usage" | "help">,
  args: readonly string[],
  config: T,
  io: CliIO,
): Parsed<T> | number {
  let parsed: Parsed<T>;
  try {
    // `args` does not change the result type and strict is parseArgs's default; only the spread hides that.
    parsed = parseArgs({ ...config, args: [...args], strict: true }) as Parsed<T>;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (e instanceof Error && code?.startsWith("ERR_PARSE_ARGS")) {
      return usageError(io, command, describeParseError(e, Object.keys(config.options ?? {})));
    }
    throw e;
  }
  if ((parsed.values as { help?: boolean }).help === true) {
    io.stdout(command.help);
    return EXIT_OK;
  }
  return parsed;
}

/** A path from the command line, resolved against the CLI's working directory when that is not the process's. */
export function userPath(io: CliIO, path: string): string {
  return isAbsolute(path) || io.cwd === process.cwd() ? path : resolve(io.cwd, path);
}

/** `a,b,,c` → `["a", "b", "c"]`. */
export function splitList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** `--kubernetes-version X.Y`, shared by check, eval, test, serve and repl. */
export const KUBERNETES_VERSION_OPTION = { "kubernetes-version": { type: "string" } } as const;

/**
 * `--kubernetes-version`'s value, validated: undefined when the flag is absent (the compiler then
 * takes the newest release modelled), or an error naming the modelled range.
 */
export function kubernetesVersionOf(
  value: string | undefined,
):
  | { readonly ok: true; readonly value: string | undefined }
  | { readonly ok: false; readonly error: string } {
  if (value === undefined) return { ok: true, value: undefined };
  const r = parseRelease(value);
  return r.ok ? r : { ok: false, error: `--kubernetes-version: ${r.error}` };
}

/** The compile options the command line gives: the CEL extras and the release, when chosen. */
export function compileChoice(extras: CelExtras, kubernetesVersion: string | undefined): CompileOptions {
  return kubernetesVersion === undefined ? { extras } : { extras, kubernetesVersion };
}
