/**
 * The slow lane's worker thread (slow-lane.ts). It lowers its own priority first (a higher nice
 * value; on Linux a thread's own), before it loads the engine and compiles policies, so that all
 * it does takes only the CPU the main thread leaves; then it loads the worker proper.
 */
import { setPriority } from "node:os";
import { workerData } from "node:worker_threads";
import type { LaneWorkerData } from "./lane-protocol.ts";

try {
  setPriority((workerData as LaneWorkerData).nice);
} catch {
  // Not permitted here: the lane still runs, without yielding to the main thread.
}
await import("./lane-worker.ts");
