/**
 * Reviews in batches (batch.ts): the reviews queued in one turn of the event loop run back to back
 * after it, each answer goes to its own request, and one failing review fails only its own.
 */
import assert from "node:assert/strict";
import { Agent } from "node:https";
import { test } from "node:test";
import { createReviewBatcher, type ReviewBatcher, SLICED } from "../../../src/adapters/server/batch.ts";
import { type Admitter, createAdmitter, type ReviewOptions } from "../../../src/adapters/server/admitter.ts";
import type { AdmissionDecision } from "../../../src/engine/types.ts";
import type { AdmissionRequest } from "../../../src/request/types.ts";
import { compileText, contextFor, FAR, podRequest, vap, vapBinding, yamlDocs } from "../../helpers/engine.ts";
import { json, send } from "../../helpers/https.ts";
import { admissionReview, serverCert, startServer } from "./fakes.ts";

const OPTIONS: ReviewOptions = { phase: "validate", deadline: FAR() };

/** A review without a slice, which is never handed back as SLICED. */
async function review(
  batcher: ReviewBatcher,
  admitter: Admitter,
  request: AdmissionRequest,
  options: ReviewOptions = OPTIONS,
): Promise<AdmissionDecision> {
  const d = await batcher.review(admitter, request, { ...options });
  assert.notEqual(d, SLICED);
  return d as AdmissionDecision;
}

/** The real engine, with one policy: names starting with "bad" are denied. */
function realAdmitter(): Admitter {
  const set = compileText(
    yamlDocs(
      vap("no-bad-names", {
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ["", "apps"],
              apiVersions: ["v1"],
              operations: ["CREATE"],
              resources: ["pods", "deployments"],
            },
          ],
        },
        validations: [{ expression: "!object.metadata.name.startsWith('bad')", message: "bad name" }],
      }),
      vapBinding("no-bad-names", "no-bad-names"),
    ),
  );
  return createAdmitter(set, contextFor(set));
}

/** Wraps an admitter and writes each review's pod name (and anything else) to one log. */
function logged(inner: Admitter, log: string[], throwFor?: string): Admitter {
  return {
    review(request: AdmissionRequest, options: ReviewOptions): AdmissionDecision {
      log.push(request.name);
      if (request.name === throwFor) throw new Error(`engine bug on ${request.name}`);
      return inner.review(request, options);
    },
  };
}

const pod = (name: string): AdmissionRequest =>
  podRequest({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "default" }, spec: {} }, { name });

void test("reviews queued in one turn run after it, back to back, in the order they came", async () => {
  const log: string[] = [];
  const admitter = logged(realAdmitter(), log);
  const batcher = createReviewBatcher();
  const pending = [review(batcher, admitter, pod("good-1"))];
  // Scheduled between two reviews of the turn: it runs after both, not between them.
  setImmediate(() => log.push("between"));
  pending.push(review(batcher, admitter, pod("bad-2")), review(batcher, admitter, pod("good-3")));
  // Nothing runs while the turn that queued them is still going.
  assert.deepEqual(log, []);
  const decisions = await Promise.all(pending);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(log, ["good-1", "bad-2", "good-3", "between"]);
  assert.deepEqual(
    decisions.map((d) => d.allowed),
    [true, false, true],
  );
  assert.match(decisions[1]?.status?.message ?? "", /bad name/);
  // A later turn gets a batch of its own.
  const later = await review(batcher, admitter, pod("bad-4"));
  assert.equal(later.allowed, false);
  assert.deepEqual(log.slice(4), ["bad-4"]);
});

void test("a review that throws rejects its own promise; the rest of the batch is answered", async () => {
  const log: string[] = [];
  const admitter = logged(realAdmitter(), log, "good-2");
  const batcher = createReviewBatcher();
  const settled = await Promise.allSettled(
    ["good-1", "good-2", "bad-3"].map((n) => review(batcher, admitter, pod(n))),
  );
  assert.deepEqual(log, ["good-1", "good-2", "bad-3"]);
  assert.deepEqual(
    settled.map((s) => s.status),
    ["fulfilled", "rejected", "fulfilled"],
  );
  const rejected = settled[1] as PromiseRejectedResult;
  assert.match(String(rejected.reason), /engine bug on good-2/);
  assert.equal((settled[2] as PromiseFulfilledResult<AdmissionDecision>).value.allowed, false);
});

void test("concurrent reviews over TLS each get their own answer, with their own uid", async (t) => {
  const log: string[] = [];
  const admitter = logged(realAdmitter(), log, "crash-7");
  const { port } = await startServer(t, { admitter: () => admitter });
  // Kept-alive connections, as the API server keeps them: requests arrive together, not each
  // behind its own handshake.
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.after(() => agent.destroy());
  const names = Array.from({ length: 24 }, (_, i) =>
    i === 7 ? "crash-7" : i % 3 === 0 ? `bad-${i}` : `good-${i}`,
  );
  for (let round = 0; round < 3; round++) {
    const responses = await Promise.all(
      names.map((name, i) =>
        send({
          port,
          ca: serverCert.cert,
          agent,
          path: i % 2 === 0 ? "/validate" : "/validate/fail",
          body: admissionReview({ uid: `uid-${round}-${i}`, name }),
        }),
      ),
    );
    responses.forEach((res, i) => {
      const name = names[i] as string;
      if (name === "crash-7") {
        // /validate/fail answers an engine failure by the route's own failurePolicy.
        assert.equal(res.status, 200, res.body);
        const r = json(res).response as { uid: string; allowed: boolean };
        assert.equal(r.uid, `uid-${round}-${i}`);
        assert.equal(r.allowed, false);
        return;
      }
      assert.equal(res.status, 200, `${name}: ${res.body}`);
      const r = json(res).response as { uid: string; allowed: boolean; status?: { message: string } };
      assert.equal(r.uid, `uid-${round}-${i}`, name);
      assert.equal(r.allowed, !name.startsWith("bad"), name);
      if (!r.allowed) assert.match(r.status?.message ?? "", /bad name/);
    });
  }
  assert.equal(log.length, names.length * 3);
});

void test("a review whose deadline passes while it waits in a batch is decided by failurePolicy", async () => {
  const log: string[] = [];
  const real = logged(realAdmitter(), log);
  // The review ahead of it in the batch takes 40 ms (the engine is synchronous: so would it unbatched).
  const slow: Admitter = {
    review(request, options) {
      const until = Date.now() + 40;
      while (Date.now() < until) {
        // busy, as a long evaluation is
      }
      return real.review(request, options);
    },
  };
  const batcher = createReviewBatcher();
  const first = review(batcher, slow, pod("good-1"));
  const late = review(batcher, real, pod("good-2"), { phase: "validate", deadline: performance.now() + 10 });
  assert.equal((await first).allowed, true);
  const d = await late;
  assert.deepEqual(log, ["good-1", "good-2"]);
  // The policy's failurePolicy is Fail (vap's default): denied, naming the deadline.
  assert.equal(d.allowed, false);
  assert.match(d.status?.message ?? "", /deadline exceeded/);
});
