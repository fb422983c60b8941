/**
 * What the people's output may assume of the terminal: its width, and whether to colour. Both only
 * when stdout is a terminal, so piped output stays plain and whole for grep, files and CI logs.
 */
import type { CliIO } from "./io.ts";

/** Used when stdout is a terminal that does not say its width. */
const FALLBACK_COLUMNS = 80;

/**
 * The width to fit lines to: the terminal's, else `$COLUMNS`, else 80. Undefined when stdout is
 * not a terminal: nothing is fitted then.
 */
export function terminalWidth(io: CliIO): number | undefined {
  if (!io.isTTY) return undefined;
  if (io.columns !== undefined && io.columns > 0) return io.columns;
  const env = Number(io.env.COLUMNS);
  return Number.isInteger(env) && env > 0 ? env : FALLBACK_COLUMNS;
}

/**
 * Whether to colour: on a terminal only, unless `--no-color` was given or `NO_COLOR` is set to
 * anything but the empty string (https://no-color.org).
 */
export function useColour(io: CliIO, noColorFlag: boolean | undefined): boolean {
  if (noColorFlag === true || !io.isTTY) return false;
  const env = io.env.NO_COLOR;
  return env === undefined || env === "";
}
