import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import {
  formatJunit,
  formatSuiteJson,
  formatSuiteText,
  mismatchLines,
  summarize,
  xmlAttribute,
  xmlText,
} from "../../../src/adapters/output/suite.ts";
import { fileSuiteReader } from "../../../src/sources/suites.ts";
import { runSuiteFile, type SuiteResult } from "../../../src/suite/run.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "suites");

async function suites(...files: string[]): Promise<SuiteResult[]> {
  const out: SuiteResult[] = [];
  for (const f of files) out.push(await runSuiteFile(join(FIXTURES, f), fileSuiteReader));
  return out;
}

interface XmlElement {
  readonly name: string;
  readonly attributes: Record<string, string>;
  readonly children: XmlElement[];
  text: string;
}

/**
 * A strict little XML reader, enough for JUnit: one root, balanced tags, quoted attributes, only the
 * five predefined entities and character references. Throws on anything else.
 */
function parseXml(xml: string): XmlElement {
  let i = 0;
  const decl = /^<\?xml [^?]*\?>\s*/.exec(xml);
  if (decl) i = decl[0].length;
  const entity = (s: string): string =>
    s.replace(/&([^;]*);/g, (_, e: string) => {
      const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
      if (e in named) return named[e] ?? "";
      const num = /^#(\d+)$/.exec(e);
      if (num) return String.fromCodePoint(Number(num[1]));
      throw new Error(`bad entity &${e};`);
    });
  const root: XmlElement = { name: "#root", attributes: {}, children: [], text: "" };
  const stack: XmlElement[] = [root];
  while (i < xml.length) {
    const top = stack.at(-1);
    assert.ok(top);
    if (xml[i] !== "<") {
      const end = xml.indexOf("<", i);
      const text = xml.slice(i, end < 0 ? xml.length : end);
      if (/[<]/.test(text) || /&(?!(amp|lt|gt|quot|apos|#\d+);)/.test(text))
        throw new Error(`bad text at ${i}`);
      top.text += entity(text);
      i = end < 0 ? xml.length : end;
      continue;
    }
    const close = /^<\/([A-Za-z][\w.-]*)\s*>/.exec(xml.slice(i));
    if (close) {
      const open = stack.pop();
      if (open?.name !== close[1]) throw new Error(`</${close[1]}> closes <${open?.name}>`);
      i += close[0].length;
      continue;
    }
    const tag = /^<([A-Za-z][\w.-]*)((?:\s+[A-Za-z_:][\w:.-]*="[^"<]*")*)\s*(\/?)>/.exec(xml.slice(i));
    if (!tag) throw new Error(`bad markup at ${i}: ${xml.slice(i, i + 40)}`);
    const attributes: Record<string, string> = {};
    for (const m of (tag[2] ?? "").matchAll(/([A-Za-z_:][\w:.-]*)="([^"]*)"/g)) {
      if ((m[1] ?? "") in attributes) throw new Error(`duplicate attribute ${m[1]}`);
      attributes[m[1] ?? ""] = entity(m[2] ?? "");
    }
    const el: XmlElement = { name: tag[1] ?? "", attributes, children: [], text: "" };
    top.children.push(el);
    if (tag[3] !== "/") stack.push(el);
    i += tag[0].length;
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack.at(-1)?.name}>`);
  if (root.children.length !== 1 || root.text.trim() !== "") throw new Error("expected one root element");
  const only = root.children[0];
  assert.ok(only);
  return only;
}

test("the little XML reader rejects what is not XML (so the JUnit checks below can fail)", () => {
  assert.throws(() => parseXml("<a><b></a></b>"));
  assert.throws(() => parseXml('<a x="1" x="2"/>'));
  assert.throws(() => parseXml("<a>AT&T</a>"));
  assert.throws(() => parseXml("<a/><b/>"));
  assert.equal(parseXml('<a x="&quot;"><b>1 &lt; 2</b></a>').children[0]?.text, "1 < 2");
});

test("JUnit: a testsuite per suite file, a testcase per case, failures with the diff", async () => {
  const results = await suites(
    "good/mutation.test.yaml",
    "failing/failing.test.yaml",
    "broken/fields.test.yaml",
  );
  const xml = formatJunit(results);
  assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n/);
  const root = parseXml(xml);
  assert.equal(root.name, "testsuites");
  assert.deepEqual(
    [root.attributes.tests, root.attributes.failures, root.attributes.errors],
    ["12", "6", "1"],
  );
  assert.deepEqual(
    root.children.map((s) => [
      s.name,
      s.attributes.name,
      s.attributes.tests,
      s.attributes.failures,
      s.attributes.errors,
    ]),
    [
      ["testsuite", "mutation", "4", "0", "0"],
      ["testsuite", "wrong expectations", "7", "6", "0"],
      ["testsuite", "broken fields", "1", "0", "1"],
    ],
  );
  const failing = root.children[1];
  assert.ok(failing);
  assert.equal(failing.children.length, 7);
  for (const tc of failing.children) {
    assert.equal(tc.name, "testcase");
    assert.equal(tc.attributes.classname, "wrong expectations");
    assert.match(tc.attributes.time ?? "", /^\d+\.\d{3}$/);
    assert.match(tc.attributes.line ?? "", /^\d+$/);
  }
  const passes = failing.children.find((c) => c.attributes.name === "passes");
  assert.deepEqual(passes?.children, []);
  const patched = failing.children.find((c) => c.attributes.name === "wrong patched object");
  const failure = patched?.children[0];
  assert.equal(failure?.name, "failure");
  // The message holds the whole mismatch (dashboards show it and fold the body away) ...
  const message = failure?.attributes.message ?? "";
  assert.match(message, /^expect\.patched: differs \(- expected, \+ actual\)\n/);
  assert.match(message, /^ {2}- {5}team: data$/m);
  assert.match(message, /^ {2}\+ {5}team: platform$/m);
  assert.doesNotMatch(message, /decision:/);
  // ... and the body the detail: where the case is, the mismatch again, and the decision.
  assert.match(failure?.text ?? "", /^at .*failing\.test\.yaml:\d+:\d+ \(cases\[\d+\]\)$/m);
  assert.match(failure?.text ?? "", /^ {2}- {5}team: data$/m);
  assert.match(failure?.text ?? "", /decision:\n/);
  const status = failing.children.find((c) => c.attributes.name === "wrong status")?.children[0];
  const statusLines = (status?.attributes.message ?? "").split("\n");
  assert.equal(
    statusLines[0],
    "expect.code: expected 422, got 403",
    "every mismatch, not the first and a count",
  );
  assert.equal(statusLines.filter((l) => l.startsWith("expect.")).length, 4);
  const broken = root.children[2]?.children[0];
  assert.equal(broken?.attributes.name, "(suite file)");
  assert.equal(broken?.children[0]?.name, "error");
  assert.match(broken?.children[0]?.text ?? "", /fields\.test\.yaml:16:7: error: cases\[0\]\.expect\.alowed/);
});

test("XML escaping keeps text readable and attributes on one line", () => {
  assert.equal(xmlText("a < b && 'c' \"d\"\u0001"), "a &lt; b &amp;&amp; 'c' \"d\"");
  assert.equal(xmlAttribute('say "hi"\nnow'), "say &quot;hi&quot;&#10;now");
});

test("text: a line per case, failures with the diff and the trace, then the plain summary line", async () => {
  const results = await suites("good/mutation.test.yaml", "failing/failing.test.yaml");
  const text = formatSuiteText(results);
  const lines = text.split("\n");
  assert.equal(lines.at(-1), "");
  assert.equal(lines.at(-2), "5 passed, 6 failed");
  assert.ok(lines.includes(`mutation (${join(FIXTURES, "good", "mutation.test.yaml")})`));
  assert.ok(lines.includes("  ✓ the label is added and then validated"));
  assert.ok(lines.includes("  ✗ wrong verdict"));
  assert.ok(lines.includes("      expect.allowed: expected true, got false"));
  assert.ok(lines.includes("      expect.code: expected 422, got 403"));
  assert.ok(lines.includes('      expect.reason: expected "Invalid", got "Forbidden"'));
  assert.ok(lines.includes('        no warning matches "never"'));
  // The patched diff: expected lines '-', actual lines '+'.
  const at = lines.indexOf("      expect.patched: differs (- expected, + actual)");
  assert.ok(at > 0);
  assert.deepEqual(lines.slice(at + 3, at + 5), ["        -     team: data", "        +     team: platform"]);
  // The explain trace of the decision follows.
  assert.ok(
    lines.some((l) =>
      /^\s+validation\[0\]: object\.spec\.replicas <= params\.maxReplicas → false \(cost \d+\)$/.test(l),
    ),
  );
  assert.ok(!lines.some((l) => /\s$/.test(l)), "no trailing spaces");
  const ascii = formatSuiteText(results, { ascii: true });
  assert.match(ascii, /^ {2}PASS the label is added and then validated$/m);
  assert.match(ascii, /^ {2}FAIL wrong verdict$/m);
});

test("text: a broken suite says its cases were not run; the summary line stays plain", async () => {
  const text = formatSuiteText(await suites("broken/fields.test.yaml"));
  assert.match(text, /^ {2}! the suite has errors; no case was run$/m);
  assert.match(
    text,
    /^1 suite file has errors \(see above\); no case was run\n0 passed, 0 failed, 1 error\n$/m,
  );
});

test("mismatch lines name the defaults an expectation came from", () => {
  assert.deepEqual(
    mismatchLines(
      { key: "allowed", path: "defaults.expect.allowed", expected: true, actual: false },
      "cases[2]",
    ),
    ["expect.allowed (expected by defaults.expect.allowed): expected true, got false"],
  );
  assert.deepEqual(
    mismatchLines(
      { key: "code", path: "cases[2].expect.code", expected: 403, actual: null, note: "allowed" },
      "cases[2]",
    ),
    ["expect.code: expected 403, got (none)", "  allowed"],
  );
});

test("JSON: suites, cases, mismatches, and for failures the results with traces", async () => {
  const results = await suites("failing/failing.test.yaml", "broken/fields.test.yaml");
  const doc = JSON.parse(formatSuiteJson(results)) as {
    suites: {
      name: string;
      broken: boolean;
      diagnostics: { code: string }[];
      cases: {
        name: string;
        passed: boolean;
        mismatches: { key: string }[];
        results?: { trace?: unknown[] }[];
      }[];
    }[];
    summary: { passed: number; failed: number; broken: number; skipped: number };
  };
  assert.deepEqual(doc.summary, { passed: 1, failed: 6, broken: 1, skipped: 0 });
  assert.deepEqual(doc.summary, summarize(results));
  const [failing, broken] = doc.suites;
  assert.equal(failing?.cases[0]?.passed, true);
  assert.equal(failing?.cases[0]?.results, undefined, "passing cases carry no trace");
  assert.deepEqual(
    failing?.cases[1]?.mismatches.map((m) => m.key),
    ["allowed"],
  );
  assert.ok(failing?.cases[1]?.results?.some((r) => (r.trace?.length ?? 0) > 0));
  assert.equal(broken?.broken, true);
  assert.ok((broken?.diagnostics.length ?? 0) > 0);
  assert.ok(broken?.diagnostics.every((d) => d.code === "TE_SUITE"));
});
