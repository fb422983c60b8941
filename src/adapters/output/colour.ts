/**
 * Colour for people's reports: ANSI SGR codes when the command decided to colour (on a terminal,
 * without NO_COLOR or --no-color; cli/terminal.ts), nothing otherwise, so that piped output and
 * files never hold escape codes.
 */

/** How a report marks outcomes. */
export interface Palette {
  readonly pass: (s: string) => string;
  readonly fail: (s: string) => string;
  /** A broken suite, an error that stopped something from running. */
  readonly error: (s: string) => string;
  /** What is there for reference (locations, skipped counts). */
  readonly dim: (s: string) => string;
}

const same = (s: string): string => s;

export const PLAIN: Palette = { pass: same, fail: same, error: same, dim: same };

const sgr =
  (code: string) =>
  (s: string): string =>
    s === "" ? s : `\u001b[${code}m${s}\u001b[0m`;

export const ANSI: Palette = { pass: sgr("32"), fail: sgr("31"), error: sgr("33"), dim: sgr("2") };
