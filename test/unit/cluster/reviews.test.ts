/**
 * evaluateWithReviews reads the review's deadline when each round of SubjectAccessReviews starts.
 * batch.ts lends a review its time slice's end as deadline for the first, synchronous run and
 * restores the review's own when that call returns: the first round must start after that, or its
 * SubjectAccessReviews get the slice's last millisecond (test/kube/connected.test.ts found it
 * against the real API server: "no answer within 1 ms").
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AuthorizerSession, AuthorizerSessions } from "../../../src/cluster/reviews.ts";
import { evaluateWithReviews } from "../../../src/cluster/reviews.ts";
import type { EngineContext } from "../../../src/engine/context.ts";

/** A session with one check unanswered until the first round resolves it; it records each round's deadline. */
function oneCheck(): { sessions: AuthorizerSessions; deadlines: number[] } {
  const deadlines: number[] = [];
  let answered = false;
  const session: AuthorizerSession = {
    get pending() {
      return !answered;
    },
    async resolve(deadline: number) {
      deadlines.push(deadline);
      answered = true;
    },
    authorize: () => ({ decision: "allow", reason: "" }),
  };
  return { sessions: { budget: 3, session: () => session }, deadlines };
}

test("the first round of SubjectAccessReviews is bounded by the review's own deadline, not the slice lent for its first run", async () => {
  const { sessions, deadlines } = oneCheck();
  const own = 10_000;
  const slice = 1;
  let deadline = slice;
  let runs = 0;
  // As batch.ts runs a review: the slice's end while the call runs, the review's own after it.
  let result: number | Promise<number>;
  try {
    result = evaluateWithReviews(
      sessions,
      { username: "alice", groups: [] } as never,
      {} as EngineContext,
      () => deadline,
      () => ++runs,
    );
  } finally {
    deadline = own;
  }
  assert.ok(result instanceof Promise, "a check was pending: the review waits for the cluster");
  assert.equal(await result, 2, "evaluated again with the answer");
  assert.deepEqual(deadlines, [own]);
});
