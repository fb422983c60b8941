/**
 * The slow lane's worker (slow-lane.ts), loaded by slow-worker.ts once the thread runs at its lower
 * priority: builds the policy sets the main thread serves, from the same files, and answers the
 * reviews handed to it, one at a time, from the request body to the encoded reply.
 */
import { parentPort } from "node:worker_threads";
import { compilePolicySet } from "../../compile/policy.ts";
import { loadPolicyPaths } from "../../sources/files.ts";
import { decodeAdmissionReview } from "../admission/codec.ts";
import { type Admitter, serveAdmitter } from "./admitter.ts";
import {
  type FromWorker,
  fromSharedClock,
  type LaneAnswer,
  type LaneRecipe,
  type ToWorker,
} from "./lane-protocol.ts";
import { NOTHING_SENSITIVE, sensitiveOf } from "./redact.ts";
import { failureReplyFor, identityOf, replyFor, reviewOptions, type ReviewRoute } from "./review.ts";

const port = parentPort;
if (port === null) throw new Error("lane-worker.ts runs in the slow lane's worker thread");

/** The policy sets by the main thread's version; the main thread says which to forget. */
const admitters = new Map<number, Admitter>();

const post = (message: FromWorker): void => port.postMessage(message);

async function load(version: number, recipe: LaneRecipe): Promise<void> {
  try {
    const loaded = await loadPolicyPaths(recipe.paths);
    if (loaded.fingerprint !== recipe.fingerprint) {
      post({ type: "loaded", version, error: "the policy files changed since the main thread read them" });
      return;
    }
    admitters.set(version, serveAdmitter(compilePolicySet(loaded.set, recipe.compile)));
    post({ type: "loaded", version });
  } catch (e) {
    post({ type: "loaded", version, error: e instanceof Error ? e.message : String(e) });
  }
}

function review(
  admitter: Admitter,
  body: string | Uint8Array,
  route: ReviewRoute,
  deadline: number,
  debugging: boolean,
): LaneAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(
      typeof body === "string"
        ? body
        : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"),
    );
  } catch {
    return { kind: "invalid", reason: "request body is not valid JSON" };
  }
  const decoded = decodeAdmissionReview(parsed);
  if (!decoded.ok) return { kind: "invalid", reason: decoded.error.reason };
  const identity = identityOf(decoded.value.request);
  try {
    const decision = admitter.review(
      decoded.value.request,
      reviewOptions(route, fromSharedClock(deadline), debugging),
    );
    const { body: reply, outcome } = replyFor(route, decoded.value, decision);
    return {
      kind: "reply",
      payload: JSON.stringify(reply),
      allowed: reply.response.allowed,
      outcome,
      identity,
      // Without the debug log the engine records no trace, so these carry none.
      results: decision.results,
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
      const answer = review(admitter, message.body, message.route, message.deadline, message.debugging);
      post({ type: "answer", id: message.id, answer });
    }
  });
});
