import assert from "node:assert/strict";
import { test } from "node:test";
import { quote, type ReviewLogEntry, reviewLogWriter } from "../../../src/adapters/server/review-log.ts";
import { serverLog } from "../../../src/adapters/server/server-log.ts";

const ENTRY: ReviewLogEntry = {
  uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
  path: "/validate/fail",
  kind: "Pod",
  namespace: "team-a",
  name: "web-7",
  operation: "CREATE",
  allowed: false,
  outcome: "denied",
  durationMs: 0.123,
};

/** Lines written to a plain line collector. */
function collector(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line) => void lines.push(line) };
}

/** What the server's pino logger (server-log.ts) writes for the same fields. */
async function pinoLine(entry: ReviewLogEntry): Promise<string> {
  const out = collector();
  serverLog({ level: "info", stream: out }).info({ ...entry }, "admission review");
  const line = out.lines.find((l) => l.includes('"admission review"'));
  assert.ok(line, "pino wrote the line");
  return line;
}

function withoutTime(line: string): { keys: string[]; fields: Record<string, unknown> } {
  const fields = JSON.parse(line) as Record<string, unknown>;
  assert.equal(typeof fields.time, "number");
  delete fields.time;
  return { keys: Object.keys(fields), fields };
}

void test("the review line is the one pino would write: same keys, order and values", async () => {
  for (const entry of [
    ENTRY,
    // Strings from the request that need escaping, and a name outside ASCII.
    { ...ENTRY, name: 'we"b\\7\n\u0001', namespace: "équipe-β", kind: "Déploiement", allowed: true },
    // A lone surrogate (JSON.stringify escapes it) and a pair (written as it is).
    { ...ENTRY, name: "web-\ud800", namespace: "team-😀" },
    { ...ENTRY, durationMs: 12 },
  ]) {
    const out = collector();
    const write = reviewLogWriter({ level: "info", stream: out });
    assert.ok(write);
    const before = Date.now();
    write(entry);
    assert.equal(out.lines.length, 1);
    const line = out.lines[0] as string;
    assert.ok(line.endsWith("}\n") && !line.slice(0, -1).includes("\n"), "one line, newline-terminated");
    const time = (JSON.parse(line) as { time: number }).time;
    assert.ok(time >= before && time <= Date.now());
    assert.deepEqual(withoutTime(line), withoutTime(await pinoLine(entry)));
  }
});

void test("quote writes every UTF-16 code unit, alone and inside text, as JSON.stringify does", () => {
  for (let c = 0; c <= 0xffff; c++) {
    const unit = String.fromCharCode(c);
    for (const s of [unit, `web-${unit}-7`])
      if (quote(s) !== JSON.stringify(s)) assert.fail(`U+${c.toString(16)}: ${quote(s)}`);
  }
  for (const s of ["", "😀", "a\ud83d\ude00b", "\ude00\ud83d", "\u007f", 'é"', "705ab4f5-6393-11e8"])
    assert.equal(quote(s), JSON.stringify(s), JSON.stringify(s));
});

void test("a duration that is not a finite number is written as null, as pino writes it", () => {
  const out = collector();
  reviewLogWriter({ level: "debug", stream: out })?.({ ...ENTRY, durationMs: Number.NaN });
  assert.equal((JSON.parse(out.lines[0] ?? "") as { durationMs: unknown }).durationMs, null);
});

void test("no writer when the log is off or above info; one at info and below", () => {
  const out = collector();
  assert.equal(reviewLogWriter(false), undefined);
  for (const level of ["warn", "error", "fatal", "silent"] as const)
    assert.equal(reviewLogWriter({ level, stream: out }), undefined, level);
  for (const level of ["info", "debug", "trace"] as const)
    assert.equal(typeof reviewLogWriter({ level, stream: out }), "function", level);
});

void test("a stream that asks pino for metadata is told the line's level", () => {
  const seen: number[] = [];
  const stream = {
    [Symbol.for("pino.metadata")]: true,
    lastLevel: 0,
    write(_line: string) {
      seen.push(this.lastLevel);
    },
  };
  stream.lastLevel = 50;
  reviewLogWriter({ level: "info", stream })?.(ENTRY);
  assert.deepEqual(seen, [30]);
});
