/**
 * The two ways a REPL session runs: interactively on node:repl (prompt, line editing, history
 * file, tab completion, multi-line input through `Recoverable`), or over piped lines (a script:
 * each result printed, no prompts).
 */
import repl, { Recoverable } from "node:repl";
import { complete } from "./complete.ts";
import { needsMore, splitInputs } from "./input.ts";
import type { ReplReply, ReplSession } from "./session.ts";

export const PROMPT = "cel> ";

export interface InteractiveOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  /** Where history is kept across sessions; absent or empty: not kept. */
  readonly historyFile?: string;
  readonly banner?: string;
}

/** node:repl's own dot-commands that mean nothing here; `.break` (leave a multi-line input) and `.exit` stay. */
const NODE_COMMANDS_TO_DROP = ["clear", "editor", "load", "save", "help"];

/** Runs an interactive session until `:quit`, Ctrl-D or `.exit`; resolves to the exit code (0). */
export function runInteractive(session: ReplSession, options: InteractiveOptions): Promise<number> {
  return new Promise((resolvePromise) => {
    if (options.banner) options.output.write(`${options.banner}\n`);
    const server = repl.start({
      prompt: PROMPT,
      input: options.input,
      output: options.output,
      terminal: true,
      useColors: false,
      preview: false,
      ignoreUndefined: true,
      // Our replies are already text for people; node's default writer would quote them.
      writer: (value: unknown) => String(value),
      completer: (line: string) => complete(session, line),
      eval: (cmd, _context, _file, callback) => {
        // Node 24 joins the lines of a multi-line input with "\r" (Node 22 and before with "\n").
        const inputs = splitInputs(cmd.replace(/\r/g, "\n").replace(/\n$/, ""));
        if (needsMore(inputs.at(-1) ?? "")) {
          callback(new Recoverable(new Error("incomplete input")), undefined);
          return;
        }
        // The lines are in the history by now (one entry each up to Node 22, one entry from Node
        // 24); joined, they are written back through `history`'s setter (a getter may copy).
        const holder = server as unknown as { history?: unknown };
        if (Array.isArray(holder.history)) {
          const history = [...(holder.history as string[])];
          if (joinHistory(history, inputs)) holder.history = history;
        }
        handleAll(session, inputs).then(
          (r) => {
            // Closing without answering: answering would print one more prompt on the way out.
            if (r.quit) server.close();
            else callback(null, r.text === "" ? undefined : r.text);
          },
          (e: unknown) => callback(null, `internal error: ${String(e)}`),
        );
      },
    });
    const commands = server.commands as Record<string, unknown>;
    for (const name of NODE_COMMANDS_TO_DROP) delete commands[name];
    server.on("exit", () => resolvePromise(0));
    if (options.historyFile) {
      server.setupHistory(options.historyFile, (e) => {
        if (e) options.output.write(`celgate repl: history not kept: ${e.message}\n`);
      });
    }
  });
}

/**
 * node:repl up to Node 22 records each line of a multi-line input as its own history entry, so
 * up-arrow would bring back `2].size()` alone; from Node 24 it records the input as one entry, its
 * lines newest first joined by "\r". Either way, replaces them (newest first in `history`) with the
 * whole input on one line, as celgate's history has always kept it. False when the history does
 * not end with the input as expected (then it is left alone).
 */
function joinHistory(history: string[], inputs: readonly string[]): boolean {
  for (const input of [...inputs].reverse()) {
    const lines = input.split("\n").map((l) => l.trim());
    if (lines.length < 2) continue;
    const newestFirst = [...lines].reverse().join("\n");
    const oneLine = lines.filter((l) => l !== "").join(" ");
    const entry = history[0];
    if (typeof entry === "string" && entry.includes("\r")) {
      if (
        entry
          .split("\r")
          .map((l) => l.trim())
          .join("\n") !== newestFirst
      )
        return false;
      history[0] = oneLine;
      continue;
    }
    const recorded = history.slice(0, lines.length).map((l) => l.trim());
    if (recorded.join("\n") !== newestFirst) return false;
    history.splice(0, lines.length, oneLine);
  }
  return true;
}

/** Runs inputs in order, stopping at `:quit`; the texts joined. */
async function handleAll(session: ReplSession, inputs: readonly string[]): Promise<ReplReply> {
  const texts: string[] = [];
  let error = false;
  for (const input of inputs) {
    const r = await session.handle(input);
    if (r.text !== "") texts.push(r.text);
    error ||= r.error;
    if (r.quit) return { text: texts.join("\n"), error, quit: true };
  }
  return { text: texts.join("\n"), error };
}

export interface ScriptOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * Runs piped input: each complete input's result on stdout, each failure on stderr, no prompts.
 * Resolves to 0, or 1 when any input failed (so a script of checks can fail a build).
 */
export async function runScript(
  session: ReplSession,
  lines: AsyncIterable<string>,
  out: ScriptOutput,
): Promise<number> {
  let failed = false;
  let buffer: string | undefined;
  const flush = async (text: string): Promise<boolean> => {
    const r = await session.handle(text);
    if (r.error) failed = true;
    if (r.text !== "") (r.error ? out.stderr : out.stdout)(`${r.text}\n`);
    return r.quit === true;
  };
  for await (const line of lines) {
    if (buffer !== undefined && line.trimStart().startsWith(":")) {
      const text = buffer;
      buffer = undefined;
      if (await flush(text)) return failed ? 1 : 0;
    }
    buffer = buffer === undefined ? line : `${buffer}\n${line}`;
    if (needsMore(buffer)) continue;
    const text = buffer;
    buffer = undefined;
    if (await flush(text)) return failed ? 1 : 0;
  }
  // An unfinished expression at the end is evaluated as it is, to report what is wrong with it.
  if (buffer !== undefined) await flush(buffer);
  return failed ? 1 : 0;
}
