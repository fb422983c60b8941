/**
 * The slow lane's worker (slow-lane.ts), loaded by slow-worker.ts once the thread runs at its lower
 * priority: builds the policy sets the main thread serves, from the same files (and, connected to a
 * cluster, the same cluster policy objects), and answers the reviews handed to it, one at a time,
 * from the request body to the encoded reply. A cluster-connected set reads the cluster through the
 * main thread (lane-remote.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { combineWithCluster, parseClusterObjects } from "../../cluster/policies.ts";
import { compilePolicySet } from "../../compile/policy.ts";
import type { AdmissionDecision, PolicyResult } from "../../engine/types.ts";
import { loadPolicyPaths } from "../../sources/files.ts";
import { decodeAdmissionReview } from "../admission/codec.ts";
import { decodeHeapProblem, parseReviewText } from "../admission/json-text.ts";
import { type ReviewAdmitter, serveAdmitter } from "./admitter.ts";
import { clusterAdmitter } from "./cluster-admitter.ts";
import {
  type FromWorker,
  fromSharedClock,
  type LaneAnswer,
  type LaneRecipe,
  type LaneWorkerData,
  type ToWorker,
} from "./lane-protocol.ts";
import { MainThread, remoteContext, remoteSessions } from "./lane-remote.ts";
import { NOTHING_SENSITIVE, sensitiveOf } from "./redact.ts";
import { failureReplyFor, identityOf, replyFor, reviewOptions, type ReviewRoute } from "./review.ts";

const port = parentPort;
if (port === null) throw new Error("lane-worker.ts runs in the slow lane's worker thread");

/** The admitter of one review (by its id, and its deadline on this thread's clock). */
type LaneAdmitter = (review: number, deadline: () => number) => ReviewAdmitter;

/** The policy sets by the main thread's version; the main thread says which to forget. */
const admitters = new Map<number, LaneAdmitter>();

const post = (message: FromWorker): void => port.postMessage(message);
const data = workerData as LaneWorkerData;
const main = new MainThread(data.lookups, data.replied, post);

/**
 * Sends an answer. Copying it to the main thread recurses into every value it holds, and a trace's
 * values (debug log) can nest as deep as the request's data, past what the copy's recursion takes:
 * then the answer goes without its traces rather than not at all.
 */
function postAnswer(id: number, answer: LaneAnswer): void {
  try {
    post({ type: "answer", id, answer });
  } catch (e) {
    if (!(e instanceof RangeError) || !("results" in answer) || answer.results === undefined) throw e;
    const results = answer.results.map((r) => ({ ...r, trace: [] }));
    post({ type: "answer", id, answer: { ...answer, results } });
  }
}

async function load(version: number, recipe: LaneRecipe): Promise<void> {
  try {
    const loaded = await loadPolicyPaths(recipe.paths);
    if (loaded.fingerprint !== recipe.fingerprint) {
      post({ type: "loaded", version, error: "the policy files changed since the main thread read them" });
      return;
    }
    const files = compilePolicySet(loaded.set, recipe.compile);
    const cluster = recipe.cluster;
    if (cluster === undefined) {
      const admitter = serveAdmitter(files);
      admitters.set(version, () => admitter);
    } else {
      // The set the main thread serves: the files' and the cluster's policies, combined as it combined them.
      const set = cluster.policies
        ? combineWithCluster(files, parseClusterObjects(cluster.policies), recipe.compile).set
        : files;
      const budget = cluster.sarBudget;
      admitters.set(version, (review, deadline) =>
        clusterAdmitter(
          set,
          remoteContext(main, review, deadline),
          budget === undefined ? undefined : remoteSessions(main, review, budget, deadline),
        ),
      );
    }
    post({ type: "loaded", version });
  } catch (e) {
    post({ type: "loaded", version, error: e instanceof Error ? e.message : String(e) });
  }
}

async function review(
  id: number,
  admitterFor: LaneAdmitter,
  body: string | Uint8Array,
  route: ReviewRoute,
  deadline: number,
  debugging: boolean,
): Promise<LaneAnswer> {
  // The bytes become a string first, as long as the body: in a small heap that alone can be too much.
  const early = typeof body === "string" ? undefined : decodeHeapProblem(body.byteLength, 0);
  if (early !== undefined) return { kind: "invalid", reason: early, status: 413 };
  const parsed = parseReviewText(
    typeof body === "string"
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"),
  );
  if (!parsed.ok) return { kind: "invalid", reason: parsed.error.reason, status: parsed.error.status };
  const decoded = decodeAdmissionReview(parsed.value);
  if (!decoded.ok) return { kind: "invalid", reason: decoded.error.reason };
  const identity = identityOf(decoded.value.request);
  try {
    const options = reviewOptions(route, fromSharedClock(deadline), debugging);
    const decision: AdmissionDecision = await admitterFor(id, () => options.deadline).review(
      decoded.value.request,
      options,
    );
    const { body: reply, outcome } = replyFor(route, decoded.value, decision);
    return {
      kind: "reply",
      payload: JSON.stringify(reply),
      allowed: reply.response.allowed,
      outcome,
      identity,
      // Without the debug log the engine records no trace, so these carry none; nor the patches
      // (the reply has them), which the main thread's metrics and trace log do not read.
      results: decision.results.map(withoutPatch),
      secrets: debugging ? sensitiveOf(decoded.value.request) : NOTHING_SENSITIVE,
    };
  } catch (e) {
    const failure = failureReplyFor(route, decoded.value);
    return {
      kind: "failed",
      error: e instanceof Error ? (e.stack ?? e.message) : String(e),
      identity,
      ...(failure !== undefined
        ? { payload: JSON.stringify(failure), allowed: failure.response.allowed }
        : {}),
    };
  }
}

// Messages are handled in order; a load finishes before a review sent after it starts.
let queue: Promise<void> = Promise.resolve();
port.on("message", (message: ToWorker) => {
  // Outside the queue: the review waiting for it holds the queue.
  if (message.type === "resolved") {
    main.resolved(message.review, message.error);
    return;
  }
  queue = queue.then(async () => {
    if (message.type === "load") await load(message.version, message.recipe);
    else if (message.type === "forget") admitters.delete(message.version);
    else {
      const admitter = admitters.get(message.version);
      if (admitter === undefined) {
        // Bytes that moved here go back, for the main thread to review them.
        if (typeof message.body === "string")
          post({ type: "answer", id: message.id, answer: { kind: "unavailable" } });
        else
          port.postMessage(
            {
              type: "answer",
              id: message.id,
              answer: { kind: "unavailable", body: message.body },
            } satisfies FromWorker,
            [message.body.buffer as ArrayBuffer],
          );
        return;
      }
      const answer = await review(
        message.id,
        admitter,
        message.body,
        message.route,
        message.deadline,
        message.debugging,
      );
      postAnswer(message.id, answer);
    }
  });
});

function withoutPatch(r: PolicyResult): PolicyResult {
  if (r.patch === undefined) return r;
  const { patch: _patch, ...rest } = r;
  return rest;
}
