/**
 * The fault trial's connected phases (issue 36 item 2): `celgate serve`, built, connected through a
 * kubeconfig to the test API server (bench/cluster.ts), with the trial's policies plus one whose
 * params, namespaceSelector and namespaceObject every review reads from the server's caches. The
 * same ordinary load with and without two connections of costly-but-legal reviews, as the
 * files-only phases run them: the costly ones move to the slow lane, which reads the cluster through
 * the main thread, and the ordinary ones must keep their throughput and decisions.
 *
 * trial.ts runs these with its own parts (passed in, so that this file imports nothing of it).
 */
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { startBenchCluster } from "./cluster.ts";

interface TrialServer {
  readonly child: ChildProcess;
  readonly port: number;
  readonly dir: string;
  readonly exited: Promise<number | null>;
}

/** The parts of trial.ts these phases are made of. */
export interface TrialParts<Server extends TrialServer, Result, Shot> {
  startServer(drainSeconds: number, extraArgs: readonly string[]): Promise<Server>;
  shots(
    port: number,
    log: (line: string) => void,
  ): Promise<{ readonly ordinary: (n: number) => Shot; readonly costly: Shot }>;
  phase(
    name: string,
    server: Server,
    seconds: number,
    connections: number,
    next: (connection: number, n: number) => Shot,
  ): Promise<Result>;
}

/** Ordinary load on 50 connections, then the same with costly reviews on 2 of them, connected. */
export async function connectedTrial<Server extends TrialServer, Result, Shot>(
  seconds: number,
  log: (line: string) => void,
  parts: TrialParts<Server, Result, Shot>,
  done: (r: Result) => void,
): Promise<void> {
  const cluster = await startBenchCluster();
  try {
    const server = await parts.startServer(10, [
      "--kubeconfig",
      cluster.kubeconfig,
      "--policies",
      cluster.policies,
    ]);
    try {
      const s = await parts.shots(server.port, (line) => log(`connected: ${line}`));
      done(await parts.phase("connected: load, 50 conns", server, seconds, 50, (_c, n) => s.ordinary(n)));
      done(
        await parts.phase("connected: costly reviews on 2 of 50 conns", server, seconds, 50, (c, n) =>
          c < 2 ? s.costly : s.ordinary(n),
        ),
      );
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
      rmSync(server.dir, { recursive: true, force: true });
    }
  } finally {
    await cluster.stop();
  }
}
