/**
 * What a command may touch of the outside world. Commands write through these functions and never
 * to `process` directly, so tests drive them in-process with a fake and the REPL can reuse them.
 */
export interface CliIO {
  /** Writes text as given (callers include the newlines). */
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of standard input. */
  stdin(): Promise<string>;
  /**
   * Standard input line by line, as it arrives, so `expr --batch` can answer each line before the
   * next is written (a co-process). Absent: `stdin()` is read whole and split.
   */
  stdinLines?(): AsyncIterable<string>;
  /** Relative paths on the command line are resolved against this directory. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal. */
  readonly isTTY: boolean;
  /** The terminal's width in columns, when stdout is one and says. */
  readonly columns?: number;
}

/** Exit codes: 0 all good, 1 an outcome to act on (deny, failed check, eval error), 2 bad usage or input. */
export const EXIT_OK = 0;
export const EXIT_OUTCOME = 1;
export const EXIT_USAGE = 2;

/** A command: its help text and how to run it. Adding a command is one entry in main.ts's table. */
export interface Command {
  readonly name: string;
  /** One line for the command list in `celgate --help`. */
  readonly summary: string;
  /** The synopsis, shown with usage errors. */
  readonly usage: string;
  /** The full text of `celgate help <name>`. */
  readonly help: string;
  run(args: readonly string[], io: CliIO): Promise<number>;
}

/** Lines of stdin, from the streaming reader when there is one. */
export async function* inputLines(io: CliIO): AsyncIterable<string> {
  if (io.stdinLines) {
    yield* io.stdinLines();
    return;
  }
  const text = await io.stdin();
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  yield* lines;
}
