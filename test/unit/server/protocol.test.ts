/**
 * Requests the server refuses before a route sees them, answered so the client can read the answer
 * (issue 28 items 6 and 8): headers over the limit (431), a body over the limit (413), a request past
 * the bytes-in-flight budget (429). Each client here writes its whole request before it reads, as a
 * client that does not watch for an early answer does: a server that closed the connection with
 * bytes unread would reset it, and the answer would be lost (EPIPE or ECONNRESET instead).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TLSSocket } from "node:tls";
import { BODY_LIMIT } from "../../../src/adapters/server/http.ts";
import { admissionReview, FixedAdmitter, startServer } from "./fakes.ts";
import { openTls, readResponse, requestHead, sleep, writeAll } from "./raw.ts";

/** An AdmissionReview of about `bytes` bytes (an annotation pads it). */
function reviewOf(bytes: number, uid = "big"): Buffer {
  const review = admissionReview({ uid });
  const request = review.request as { object: { metadata: Record<string, unknown> } };
  request.object.metadata.annotations = { pad: "x".repeat(bytes) };
  return Buffer.from(JSON.stringify(review));
}

async function roundTrip(socket: TLSSocket, request: Buffer): Promise<ReturnType<typeof readResponse>> {
  const written = await writeAll(socket, request);
  assert.equal(written, undefined, `the request could not be written: ${written}`);
  return readResponse(socket);
}

void test("1 MiB of headers: 431 with a reason, read after the whole request was written", async (t) => {
  const { port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const socket = await openTls(port);
  t.after(() => socket.destroy());
  const head = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"x".repeat(1024 * 1024)}\r\n\r\n`;
  const res = await roundTrip(socket, Buffer.from(head));
  assert.equal(res.status, 431);
  assert.equal(res.headers.connection, "close");
  assert.match(JSON.parse(res.body).message, /headers are larger than 16384 bytes/);
});

void test("a body over the limit: 413, read after the whole upload; the connection then serves the next request", {
  timeout: 60_000,
}, async (t) => {
  const { port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const socket = await openTls(port);
  t.after(() => socket.destroy());
  const body = Buffer.alloc(BODY_LIMIT * 2, 0x20);
  const res = await roundTrip(
    socket,
    Buffer.concat([Buffer.from(requestHead("/validate", body.length)), body]),
  );
  assert.equal(res.status, 413);
  assert.match(JSON.parse(res.body).message, new RegExp(`larger than ${BODY_LIMIT} bytes`));
  const next = reviewOf(100, "after-413");
  const again = await roundTrip(
    socket,
    Buffer.concat([Buffer.from(requestHead("/validate", next.length)), next]),
  );
  assert.equal(again.status, 200);
  assert.equal(JSON.parse(again.body).response.uid, "after-413");
});

void test("past the bytes-in-flight budget: 429 before the body is read, readable; the budget frees as answers go out", {
  timeout: 60_000,
}, async (t) => {
  const { port, registry } = await startServer(t, {
    admitter: () => new FixedAdmitter(),
    limits: { maxBytesInFlight: 1024 * 1024 },
  });
  const big = reviewOf(700 * 1024, "first");
  // The first holds 700 KiB of the budget while its body is still coming.
  const first = await openTls(port);
  t.after(() => first.destroy());
  first.write(requestHead("/validate", big.length));
  first.write(big.subarray(0, 1000));
  await sleep(100);
  // The second would pass the budget: answered 429 at once; it writes its whole body first anyway.
  const second = await openTls(port);
  t.after(() => second.destroy());
  const refused = await roundTrip(
    second,
    Buffer.concat([Buffer.from(requestHead("/validate", big.length)), big]),
  );
  assert.equal(refused.status, 429);
  assert.equal(refused.headers["retry-after"], "1");
  assert.match(JSON.parse(refused.body).message, /too many bytes of requests in flight/);
  // The first completes and is answered; its share of the budget is free again.
  const answer = readResponse(first);
  first.write(big.subarray(1000));
  assert.equal((await answer).status, 200);
  const third = reviewOf(700 * 1024, "third");
  const accepted = await roundTrip(
    second,
    Buffer.concat([Buffer.from(requestHead("/validate", third.length)), third]),
  );
  assert.equal(accepted.status, 200);
  assert.equal(JSON.parse(accepted.body).response.uid, "third");
  assert.match(await registry.metrics(), /^celgate_load_shed_total\{reason="bytes_in_flight"\} 1$/m);
});
