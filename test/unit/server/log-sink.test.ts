/**
 * The batched log sink `serve` writes its request log through, driven by fastify's own pino as in
 * `serve`, into a file read back after each step.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { BatchedLogSink, type LogSinkOptions } from "../../../src/adapters/server/log-sink.ts";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

function tempFile(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), "celgate-log-sink-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "log.ndjson");
}

/** A sink on a fresh file and the pino logger fastify builds over it. */
function logTo(
  t: TestContext,
  options: LogSinkOptions = {},
): { sink: BatchedLogSink; log: FastifyBaseLogger; read(): string[] } {
  const file = tempFile(t);
  const sink = new BatchedLogSink({ dest: file, ...options });
  t.after(() => sink.close());
  const app = Fastify({ logger: { level: "info", stream: sink } });
  return {
    sink,
    log: app.log,
    read: () =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
  };
}

void test("info lines wait for a flush, then come out whole and in order", (t) => {
  const { sink, log, read } = logTo(t);
  log.info("one");
  log.info({ uid: "u" }, "two");
  assert.deepEqual(read(), []);
  assert.equal(sink.lines, 2);
  sink.flush();
  assert.deepEqual(read(), ["one", "two"]);
  sink.flush();
  assert.deepEqual(read(), ["one", "two"], "a second flush writes nothing again");
});

void test("a warning or an error is written at once, with every line held before it", (t) => {
  const { log, read } = logTo(t);
  log.info("before");
  log.warn("warned");
  assert.deepEqual(read(), ["before", "warned"]);
  log.info("after");
  assert.deepEqual(read(), ["before", "warned"]);
  log.error("failed");
  assert.deepEqual(read(), ["before", "warned", "after", "failed"]);
});

void test("held lines are written once they pass the size threshold", (t) => {
  const { log, read } = logTo(t, { flushBytes: 300 });
  let i = 0;
  // Each line is well under 300 characters, so the first few are held; bounded in case none is written.
  while (read().length === 0 && i < 50) log.info(`line ${i++}`);
  assert.ok(i > 1 && i < 50, `written after ${i} lines`);
  assert.deepEqual(
    read(),
    Array.from({ length: i }, (_, k) => `line ${k}`),
  );
});

void test("a line longer than the buffer goes out whole, after the lines held before it", (t) => {
  const { log, read } = logTo(t, { flushBytes: 100 });
  const long = `long ${"é".repeat(400)} end`;
  log.info("held");
  log.info(long);
  log.info("after ✓");
  log.warn("warned");
  assert.deepEqual(read(), ["held", long, "after ✓", "warned"]);
});

void test("held lines are written within the flush interval", async (t) => {
  const { log, read } = logTo(t, { flushMs: 20 });
  log.info("soon");
  assert.deepEqual(read(), []);
  for (let i = 0; i < 100 && read().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(read(), ["soon"]);
});

void test("close writes what is held; lines after it are written as they come", (t) => {
  const { sink, log, read } = logTo(t);
  log.info("held");
  sink.close();
  assert.deepEqual(read(), ["held"]);
  log.info("late");
  assert.deepEqual(read(), ["held", "late"]);
});

void test("a process that exits writes the lines it held", (t) => {
  const file = tempFile(t);
  const script = `
    import { BatchedLogSink } from "./src/adapters/server/log-sink.ts";
    const sink = new BatchedLogSink({ dest: ${JSON.stringify(file)} });
    sink.write('{"msg":"last words"}\\n');
    process.exit(3);
  `;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  assert.equal(child.status, 3, child.stderr);
  assert.equal(readFileSync(file, "utf8"), '{"msg":"last words"}\n');
});

void test("a write that fails turns the log off with one line on stderr; the process carries on", (t) => {
  const file = tempFile(t);
  // A descriptor opened for reading only: every write to it fails (EBADF), as a closed pipe would (EPIPE).
  const script = `
    import { openSync, writeFileSync } from "node:fs";
    import { BatchedLogSink } from "./src/adapters/server/log-sink.ts";
    writeFileSync(${JSON.stringify(file)}, "");
    const sink = new BatchedLogSink({ dest: openSync(${JSON.stringify(file)}, "r") });
    sink.write('{"msg":"one"}\\n');
    sink.flush();
    sink.write('{"msg":"two"}\\n');
    sink.flush();
    sink.close();
    process.stdout.write("still here\\n");
  `;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout, "still here\n");
  assert.match(
    child.stderr,
    /^celgate: the request log could not be written \(.*EBADF.*\); it is off from now on\n$/,
  );
  assert.equal(readFileSync(file, "utf8"), "");
});
