/**
 * Runs of one task that never overlap and never miss a request. A call while no run is going starts
 * one. A call during a run is answered by the next run, which starts when the current one ends:
 * whatever prompted the call (a file written after the current run read it) is seen by a run that
 * began after it. Calls during the same run share that next run, so a burst costs one more run, not
 * one per call.
 */
export function serialized<T>(task: () => Promise<T>): () => Promise<T> {
  let running = false;
  let next:
    | { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void }
    | undefined;

  const start = (): Promise<T> => {
    running = true;
    let run: Promise<T>;
    try {
      run = task();
    } catch (error) {
      run = Promise.reject(error);
    }
    const settled = (): void => {
      const waiting = next;
      next = undefined;
      running = false;
      // Synchronously, so no caller can slip a run in between this one and the one it asked for.
      if (waiting !== undefined) start().then(waiting.resolve, waiting.reject);
    };
    run.then(settled, settled);
    return run;
  };

  return () => {
    if (!running) return start();
    if (next === undefined) {
      let resolve!: (value: T) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      next = { promise, resolve, reject };
    }
    return next.promise;
  };
}
