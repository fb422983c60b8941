/**
 * Long work on the server's thread in slices: a reload parses and compiles a whole policy set,
 * which for a large set would hold the event loop, and every review and probe with it, until it
 * is done. The loader and the compiler ask a pacer between files and between policies; it yields
 * one turn of the event loop (setImmediate: after the I/O that is waiting, so requests that have
 * arrived are read and answered) once a slice's worth of work has run.
 */
import { performance } from "node:perf_hooks";

/** How much work runs between two turns of the event loop; the same slice a review gets. */
export const RELOAD_SLICE_MS = 5;

/** A pause to call between units of work: a promise to wait for when the slice is used up, else undefined. */
export type Pause = () => Promise<void> | undefined;

export function slicer(sliceMs = RELOAD_SLICE_MS): Pause {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return new Promise((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
