/**
 * How connections end and how many there may be (connections.ts, issue 28 items 6 and 7): a close
 * answers what is in flight with `Connection: close` and finishes within its bound, never waiting
 * out a keep-alive; a connection opened before the close gets its request answered, not reset; at
 * the connection cap the longest-idle connection makes room, and a new one is refused only when
 * every connection is busy. Go's http.Server.Shutdown (net/http/server.go) is the model: it closes
 * idle connections, waits for active ones, and treats a new connection that has sent nothing yet
 * as not idle for its first seconds.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect as netConnect, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Admitter, ReviewOptions } from "../../../src/adapters/server/admitter.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { json, send } from "../../helpers/https.ts";
import { admissionReview, FixedAdmitter, serverCert, startServer } from "./fakes.ts";
import { closed, openTls, readResponse, requestHead, sleep } from "./raw.ts";

const ca = serverCert.cert;
const BODY = Buffer.from(JSON.stringify(admissionReview({ uid: "late" })));

void test("an answer sent after close() began says Connection: close, and close() does not wait out the keep-alive", {
  timeout: 30_000,
}, async (t) => {
  const { server, port } = await startServer(t, { admitter: () => new FixedAdmitter() });
  const socket = await openTls(port);
  t.after(() => socket.destroy());
  // The headers arrive before the drain; the body, and so the answer, after the close began.
  socket.write(requestHead("/validate", BODY.length));
  socket.write(BODY.subarray(0, 10));
  await sleep(50);
  const closing = server.drain();
  await sleep(50);
  const answer = readResponse(socket);
  socket.write(BODY.subarray(10));
  const res = await answer;
  assert.equal(res.status, 200);
  assert.equal((JSON.parse(res.body) as { response: { uid: string } }).response.uid, "late");
  assert.equal(res.headers.connection, "close");
  // Closed by the server after its answer; the close finishes (before: it waited 100 s).
  assert.equal(await closed(socket), true);
  await closing;
});

void test("a connection opened before the close whose request comes after it began is answered, not reset", {
  timeout: 30_000,
}, async (t) => {
  // A quiet period longer than anything this test waits: the connection is not idle yet.
  const { server, port } = await startServer(t, { admitter: () => new FixedAdmitter(), quietMs: 20_000 });
  const socket = await openTls(port);
  t.after(() => socket.destroy());
  const closing = server.drain();
  // Long enough for a close that drops idle connections at once to have dropped this one.
  await sleep(200);
  const answer = readResponse(socket);
  socket.write(requestHead("/validate", BODY.length));
  socket.write(BODY);
  const res = await answer;
  assert.equal(res.status, 200);
  assert.equal(res.headers.connection, "close");
  assert.equal(await closed(socket), true);
  await closing;
});

void test("a request still unfinished when the close timeout passes is cut off, and close() finishes", {
  timeout: 30_000,
}, async (t) => {
  const { server, port } = await startServer(t, { admitter: () => new FixedAdmitter(), closeTimeoutMs: 300 });
  const socket = await openTls(port);
  t.after(() => socket.destroy());
  // Headers and half a body, then nothing: the request never completes.
  socket.write(requestHead("/validate", BODY.length));
  socket.write(BODY.subarray(0, 10));
  await sleep(50);
  await server.close();
  assert.equal(await closed(socket), true);
});

void test("abort() ends a long drain at once and drops every connection", { timeout: 30_000 }, async (t) => {
  const { server, port } = await startServer(t, { admitter: () => new FixedAdmitter(), drainMs: 600_000 });
  const socket = await openTls(port);
  t.after(() => socket.destroy());
  const drained = server.drain();
  assert.equal(server.draining, true);
  server.abort();
  await drained;
  assert.equal(await closed(socket), true);
  await assert.rejects(send({ port, ca, path: "/healthz", timeoutMs: 2000 }), /ECONNREFUSED/);
});

void test("at the connection cap the longest-idle connection makes room; when every one is answering a new one is refused", {
  timeout: 30_000,
}, async (t) => {
  // Answers wait for the test to release them, so connections can be caught answering.
  let release: () => void = () => {};
  let gate = Promise.resolve();
  const admitter = new FixedAdmitter();
  const { port, registry } = await startServer(t, {
    // The server awaits an answer that is a promise (as a cluster-connected admitter's is);
    // startServer's type names only the synchronous kind.
    admitter: () =>
      ({
        review: async (request: AdmissionRequest, options: ReviewOptions) => {
          await gate;
          return admitter.review(request, options);
        },
      }) as unknown as Admitter,
    limits: { maxConnections: 3 },
  });
  const sockets: TLSSocket[] = [];
  t.after(() => {
    for (const s of sockets) s.destroy();
  });
  // Three kept-alive connections, each idle after one answer; the first is idle longest.
  for (let i = 0; i < 3; i++) {
    const s = await openTls(port);
    sockets.push(s);
    const answer = readResponse(s);
    s.write(requestHead("/validate", BODY.length));
    s.write(BODY);
    assert.equal((await answer).status, 200);
    await sleep(20);
  }
  const [first, second, third] = sockets;
  // A fourth: accepted, and the first one closed to make room.
  const fourth = await openTls(port);
  sockets.push(fourth);
  assert.equal(await closed(first as TLSSocket), true);
  // Now all three open connections are answering: each request has arrived whole, its answer held.
  gate = new Promise((resolve) => {
    release = resolve;
  });
  const answers = [second, third, fourth].map((s) => {
    const answer = readResponse(s as TLSSocket);
    s?.write(requestHead("/validate", BODY.length));
    s?.write(BODY);
    return answer;
  });
  await sleep(100);
  await assert.rejects(
    openTls(port, { timeoutMs: 3000 }),
    /ECONNRESET|socket hang up|disconnected|timed out/,
  );
  // The answering ones are untouched: each gets its answer.
  release();
  for (const answer of answers) assert.equal((await answer).status, 200);
  const text = await registry.metrics();
  assert.match(text, /^celgate_load_shed_total\{reason="connection_evicted"\} 1$/m);
  assert.match(text, /^celgate_load_shed_total\{reason="connection_refused"\} 1$/m);
  assert.match(text, /^celgate_connections_open 3$/m);
});

void test("a slowloris cannot lock out clients: with every slot taken by connections mid-handshake or trickling a body, ordinary requests are answered (issue 37 item 4)", {
  timeout: 60_000,
}, async (t) => {
  const cap = 20;
  const { port, registry } = await startServer(t, {
    admitter: () => new FixedAdmitter(),
    limits: { maxConnections: cap },
  });
  const attackers: (Socket | TLSSocket)[] = [];
  let trickle: NodeJS.Timeout | undefined;
  t.after(() => {
    clearInterval(trickle);
    for (const s of attackers) s.destroy();
  });
  // Half the slots: TCP connections that never start their TLS handshake.
  for (let i = 0; i < cap / 2; i++) {
    const s = netConnect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    await new Promise((resolve) => s.once("connect", resolve));
    attackers.push(s);
  }
  // The other half: headers sent, then a body that comes one byte at a time.
  const slowBodies: TLSSocket[] = [];
  for (let i = 0; i < cap / 2; i++) {
    const s = await openTls(port);
    s.on("error", () => {});
    s.write(requestHead("/validate", BODY.length));
    s.write(BODY.subarray(0, 1));
    attackers.push(s);
    slowBodies.push(s);
  }
  let sent = 1;
  trickle = setInterval(() => {
    for (const s of slowBodies)
      if (!s.destroyed && sent < BODY.length - 1) s.write(BODY.subarray(sent, sent + 1));
    sent++;
  }, 100);
  await sleep(200);
  assert.match(await registry.metrics(), new RegExp(`^celgate_connections_open ${cap}$`, "m"));

  // Ordinary clients, one new connection per request, while the attackers keep trying.
  let answered = 0;
  const requests = 30;
  for (let i = 0; i < requests; i++) {
    const res = await send({ port, ca, path: "/validate", body: admissionReview({ uid: `u${i}` }) }).catch(
      (e: Error) => ({ status: 0, body: e.message }),
    );
    if (res.status === 200) answered++;
    // An attacker reconnects for each slot it lost, as a slowloris does.
    const s = netConnect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    attackers.push(s);
  }
  assert.equal(answered, requests, "ordinary requests were refused while slow clients held the slots");
  const text = await registry.metrics();
  const evicted = Number(/^celgate_load_shed_total\{reason="connection_evicted"\} (\d+)$/m.exec(text)?.[1]);
  assert.ok(evicted >= requests, `only ${evicted} connections evicted`);
  assert.doesNotMatch(text, /^celgate_load_shed_total\{reason="connection_refused"\} [1-9]/m);
});

void test("during the drain every answer asks the client to reconnect, whenever its request arrived", async (t) => {
  const { server, port } = await startServer(t, { admitter: () => new FixedAdmitter(), drainMs: 60_000 });
  void server.drain();
  const res = await send({ port, ca, path: "/validate", body: admissionReview({ uid: "d" }) });
  assert.equal(res.status, 200);
  assert.equal((json(res).response as { uid: string }).uid, "d");
  assert.equal(res.headers.connection, "close");
  server.abort();
});
