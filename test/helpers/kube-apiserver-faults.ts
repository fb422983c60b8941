/**
 * The faults the test API server can play, kept apart from its wire protocol:
 *
 * - A hang, as `kill -STOP` of the API server looks from a client: connections are accepted (the
 *   kernel completes the TCP handshake) but nothing is read or written, not even TLS; requests on
 *   connections opened before get no answer; open watches get no events and no bookmarks. `wake()`
 *   is SIGCONT: whatever was held is handled and sent, in order.
 * - Every watch answered with `410 Gone` (`expireWatches`), as a server whose watch cache keeps
 *   compacting past the client answers: one `ERROR` event with an `Expired` Status, and the stream
 *   ends (storage/cacher/watch_cache.go "too old resource version").
 *
 * The gate sits in front of the HTTPS server: a plain TCP listener that hands each connection to
 * it, or holds it while hung.
 */
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import type { Server as HttpsServer } from "node:https";

export class FaultGate {
  private hung = false;
  private readonly heldSockets: Socket[] = [];
  private readonly heldWork: (() => void)[] = [];
  /** Every watch is answered with 410 Gone while true. */
  expireWatches = false;

  get isHung(): boolean {
    return this.hung;
  }

  /** Stops answering anything, as SIGSTOP does. */
  hang(): void {
    this.hung = true;
  }

  /** Answers again, as SIGCONT does: held connections are handed over, held work runs in order. */
  wake(https: HttpsServer | undefined): void {
    this.hung = false;
    for (const s of this.heldSockets.splice(0)) if (!s.destroyed) https?.emit("connection", s);
    for (const w of this.heldWork.splice(0)) w();
  }

  /** Runs `work` now, or when the server wakes. */
  whenAwake(work: () => void): void {
    if (this.hung) this.heldWork.push(work);
    else work();
  }

  /** The listener in front of `https`: accepts every connection, and holds it while hung. */
  frontDoor(https: HttpsServer, track: (s: Socket) => void): TcpServer {
    return createTcpServer((socket) => {
      track(socket);
      if (this.hung) this.heldSockets.push(socket);
      else https.emit("connection", socket);
    });
  }

  /** Forgets what was held (the server goes away: its connections are cut anyway). */
  drop(): void {
    for (const s of this.heldSockets.splice(0)) s.destroy();
    this.heldWork.length = 0;
  }
}
