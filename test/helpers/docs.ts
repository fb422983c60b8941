/**
 * The user documentation as the tests read it: README (what a user needs first) and the reference
 * pages under docs/ that README points to. A statement a test holds the docs to may live on any of
 * them (`userDocs`); an example a test runs is read from the page that shows it.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);

export const readme = readFileSync(new URL("README.md", root), "utf8");

/** A page under docs/, by file name. */
export function doc(name: string): string {
  return readFileSync(new URL(`docs/${name}`, root), "utf8");
}

/** README and every page under docs/, joined: where a statement about celgate may be made. */
export const userDocs = [
  readme,
  ...readdirSync(new URL("docs/", root))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => doc(f)),
].join("\n");

/** The section of `text` under the `## ` heading that starts with `title`, up to the next one. */
export function section(text: string, title: string): string {
  const start = text.indexOf(`## ${title}`);
  assert.ok(start >= 0, `the page has a section '${title}'`);
  const end = text.indexOf("\n## ", start + 3);
  return text.slice(start, end < 0 ? undefined : end);
}
