/** Reading `eval -o json`: a report per resource, its entries flattened back to one list. */
import type { ResourceReport } from "../../../src/adapters/output/entries.ts";
import type { ResultEntry } from "../../../src/adapters/output/results.ts";

/** Every entry of every resource, each with its resource (and the defaulted fields, with --explain). */
export function flatEntries(stdout: string): ResultEntry[] {
  const reports = JSON.parse(stdout || "[]") as ResourceReport[];
  return reports.flatMap((rep) =>
    rep.results.map((e) => ({
      ...e,
      resource: rep.resource,
      ...(rep.defaulted ? { defaulted: rep.defaulted } : {}),
    })),
  );
}
