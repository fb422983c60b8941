/** Commands that are registered (so `celgate --help` lists them) but not written yet. */
import { type CliIO, type Command, EXIT_USAGE } from "../io.ts";

export function notImplemented(name: string, summary: string): Command {
  const usage = `celgate ${name} [options]`;
  return {
    name,
    summary,
    usage,
    help: `${summary}\n\nusage: ${usage}\n\nNot implemented yet.\n`,
    async run(_args: readonly string[], io: CliIO): Promise<number> {
      io.stderr(`celgate ${name}: not implemented yet\n`);
      return EXIT_USAGE;
    },
  };
}
