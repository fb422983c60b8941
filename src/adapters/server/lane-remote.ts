/**
 * The slow lane's worker side of a cluster-connected set: an engine context and an authorizer whose
 * answers come from the main thread, which holds the cluster's caches and the SubjectAccessReview
 * session (lane-lookups.ts answers there).
 *
 * Why asked, not copied: a copy of the caches in the worker would be a second list and watch of
 * every paramKind (twice the API server's load, and a heap the size of the caches in a worker capped
 * at 128 MiB), at a different resourceVersion from the main thread's, so a review could get another
 * decision there. Asked, a review reads the same objects wherever it runs. The engine is synchronous,
 * so a lookup blocks the worker until the main thread has replied: the question goes out on a port
 * of its own, the main thread answers it between its other work, posts the reply and wakes the
 * worker through a shared Int32 (Atomics), and the worker takes the reply off the port with
 * receiveMessageOnPort. A review makes a few lookups (its Namespace, each bound policy's params),
 * each asked once per review. SubjectAccessReviews need no blocking: the engine already answers a
 * check it does not know provisionally and is evaluated again once the answers are in
 * (cluster/reviews.ts), so the worker awaits them as the main thread does.
 */
import { type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import type { AuthorizationAnswer, AuthorizationAttributes } from "../../cel/index.ts";
import type { AuthorizerSession, AuthorizerSessions } from "../../cluster/reviews.ts";
import type { EngineContext } from "../../engine/context.ts";
import type { ParamError, ParamLookup, StoredParam } from "../../engine/params.ts";
import type { KindScope } from "../../kube/scope.ts";
import type { Result } from "../../result.ts";
import type { UserInfo } from "../../request/types.ts";
import {
  type FromWorker,
  type LaneAsk,
  type LaneQuestion,
  type LaneReply,
  toSharedClock,
} from "./lane-protocol.ts";

/**
 * How long past a review's deadline the worker waits for a reply before it gives the review up as
 * failed: the main thread replies between its other work, so only a main thread that is stuck
 * takes this long, and the engine notices the deadline itself at its next check.
 */
const REPLY_GRACE_MS = 2000;
/** The longest single wait: the thread stays responsive to being terminated. */
const WAIT_SLICE_MS = 100;

/** The worker's end of the lookup port: questions out, replies in, one at a time. */
export class MainThread {
  private seq = 0;
  private readonly flag: Int32Array;
  private readonly waiting = new Map<number, (error?: string) => void>();

  constructor(
    private readonly port: MessagePort,
    replied: SharedArrayBuffer,
    private readonly post: (message: FromWorker) => void,
  ) {
    this.flag = new Int32Array(replied);
  }

  /** The main thread's answer to `question` about review `review`; throws if it cannot give one. */
  ask(review: number, question: LaneQuestion, deadline: number): unknown {
    const seq = ++this.seq;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ seq, review, question } satisfies LaneAsk);
    const end = deadline + REPLY_GRACE_MS;
    for (;;) {
      const received = receiveMessageOnPort(this.port);
      if (received) {
        const reply = received.message as LaneReply;
        // A reply to an earlier question, given up on, is dropped.
        if (reply.seq !== seq) continue;
        if (reply.error !== undefined) throw new Error(reply.error);
        return reply.value;
      }
      // Woken for a reply already taken: look again before waiting.
      if (Atomics.load(this.flag, 0) === 1) {
        Atomics.store(this.flag, 0, 0);
        continue;
      }
      const left = end - performance.now();
      if (left <= 0) throw new Error(`the main thread did not answer the slow lane's ${question.op} lookup`);
      Atomics.wait(this.flag, 0, 0, Math.min(left, WAIT_SLICE_MS));
    }
  }

  /** Asks the main thread to send the review's pending SubjectAccessReviews; resolves when answered. */
  resolve(review: number, deadline: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.set(review, (error) => (error === undefined ? resolve() : reject(new Error(error))));
      this.post({ type: "resolve", review, deadline: toSharedClock(deadline) });
    });
  }

  /** The main thread's message that a review's SubjectAccessReviews are answered. */
  resolved(review: number, error?: string): void {
    const done = this.waiting.get(review);
    this.waiting.delete(review);
    done?.(error);
  }
}

/**
 * The engine context of one review in the worker: each lookup asked of the main thread once (the
 * answers kept for the review's later evaluations, so they all see the same objects).
 */
export function remoteContext(main: MainThread, review: number, deadline: () => number): EngineContext {
  const memo = new Map<string, unknown>();
  const ask = (question: LaneQuestion): unknown => {
    const key = JSON.stringify(question);
    if (memo.has(key)) return memo.get(key);
    const value = main.ask(review, question, deadline());
    memo.set(key, value);
    return value;
  };
  const params: ParamLookup = {
    ofKind: () => {
      throw new Error("the slow lane reads params through select and describeMiss only");
    },
    scopeOf: (apiVersion, kind) => ask({ op: "scopeOf", apiVersion, kind }) as KindScope,
    select: (kind, ref, requestNamespace) =>
      ask({ op: "select", kind, ref, requestNamespace }) as Result<readonly StoredParam[], ParamError>,
    describeMiss: (kind, ref, requestNamespace) =>
      ask({ op: "describeMiss", kind, ref, requestNamespace }) as string,
  };
  return {
    namespace: (name) => ask({ op: "namespace", name }) as Readonly<Record<string, unknown>> | undefined,
    params,
  };
}

/** The authorizer of one review in the worker: the main thread's SubjectAccessReview session for it. */
export function remoteSessions(
  main: MainThread,
  review: number,
  budget: number,
  deadline: () => number,
): AuthorizerSessions {
  return {
    budget,
    session(user: UserInfo): AuthorizerSession {
      return {
        authorize: (attributes: AuthorizationAttributes) =>
          main.ask(
            review,
            { op: "authorize", user, attributes, own: attributes.groups === user.groups },
            deadline(),
          ) as AuthorizationAnswer,
        get pending() {
          return main.ask(review, { op: "pending" }, deadline()) as boolean;
        },
        resolve: (by) => main.resolve(review, by),
      };
    },
  };
}
