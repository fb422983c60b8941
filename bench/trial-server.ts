/**
 * The fault trial's server phases (issue 37 items 4, 6 and 8): slow clients holding every
 * connection slot, an alias bomb written beside a valid edit on reload, and the reload of a large
 * policy set under load. bench/trial.ts runs them with its own server and load; this file knows only
 * the shapes it is handed.
 *
 * Also `node dist-bench/bench/trial-server.js --reload-block [--policies 2000]`: the longest the
 * event loop of an in-process `serve` is held (perf_hooks monitorEventLoopDelay) while it reloads a
 * set of generated policies, with the reviews it answered meanwhile.
 */
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { copyFile, rm } from "node:fs/promises";
import { Agent, request as httpsRequest } from "node:https";
import { connect as netConnect, type Socket } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { connect as tlsConnect } from "node:tls";
import { parseArgs } from "node:util";
import { startWebhook } from "../src/adapters/server/app.ts";
import { isMain } from "./common.ts";
import { podReview } from "./review.ts";
import { generateScalePolicies, writeScalePolicies } from "./scale.ts";

/** What trial.ts hands over: its running server and how it runs a phase. */
interface TrialServer {
  readonly port: number;
  readonly dir: string;
  readonly child: { kill(signal?: NodeJS.Signals): boolean; readonly pid?: number | undefined };
  readonly exited: Promise<number | null>;
}
interface Shot {
  readonly body: string;
  readonly expect: string | undefined;
}
type Phase<R, S extends TrialServer> = (
  name: string,
  server: S,
  seconds: number,
  connections: number,
  next: (connection: number, n: number) => Shot,
  extra?: (until: number) => Promise<string>,
) => Promise<R>;

export interface ServerPhaseDeps<R, S extends TrialServer> {
  readonly server: S;
  readonly seconds: number;
  readonly phase: Phase<R, S>;
  readonly ordinary: (n: number) => Shot;
  /** Starts a server of its own with extra `serve` flags. */
  readonly start: (drainSeconds: number, extraArgs: readonly string[]) => Promise<S>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Slowloris: connections that stall in the TLS handshake or trickle a body, at the cap.

const SLOW_CAP = 100;

/** Keeps `count` stalled connections open against `port` until `until`, replacing each one closed. */
function slowClients(port: number, count: number, until: number): { stop(): number } {
  const body = JSON.stringify(podReview());
  const head = `POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const open = new Set<Socket>();
  let opened = 0;
  const MAX_OPENED = 20_000;
  const one = (i: number): void => {
    if (performance.now() >= until || opened >= MAX_OPENED) return;
    opened++;
    let socket: Socket;
    if (i % 2 === 0) {
      // Connects and never sends a ClientHello.
      socket = netConnect({ host: "127.0.0.1", port });
    } else {
      // Finishes its handshake, sends its headers and then one byte of body a second.
      const tls = tlsConnect({
        host: "127.0.0.1",
        port,
        rejectUnauthorized: false,
        ALPNProtocols: ["http/1.1"],
      });
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      tls.once("secureConnect", () => {
        tls.write(head);
        timer = setInterval(() => {
          if (sent < body.length - 1) tls.write(body.slice(sent, ++sent));
        }, 1000);
      });
      tls.once("close", () => clearInterval(timer));
      socket = tls;
    }
    open.add(socket);
    socket.on("error", () => {});
    socket.once("close", () => {
      open.delete(socket);
      // A slowloris comes back for every slot it loses.
      setTimeout(() => one(i), 10);
    });
  };
  for (let i = 0; i < count; i++) one(i);
  return {
    stop: () => {
      for (const s of open) s.destroy();
      return opened;
    },
  };
}

async function slowlorisPhase<R, S extends TrialServer>(d: ServerPhaseDeps<R, S>): Promise<R> {
  const server = await d.start(10, ["--max-connections", String(SLOW_CAP)]);
  try {
    const clients = slowClients(server.port, SLOW_CAP, performance.now() + d.seconds * 1000 + 2000);
    // The slow clients take every slot first.
    await sleep(1500);
    return await d.phase(
      `slowloris: ${SLOW_CAP} stalled conns at a cap of ${SLOW_CAP}, 20 ordinary`,
      server,
      d.seconds,
      20,
      (_c, n) => d.ordinary(n),
      async (until) => {
        await sleep(Math.max(0, until - performance.now()));
        const opened = clients.stop();
        return `${opened} stalled connections opened (half mid-handshake, half trickling a body), each replaced when the server closed it`;
      },
    );
  } finally {
    server.child.kill("SIGTERM");
    await server.exited;
    rmSync(server.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// An alias bomb beside a valid edit, on reload.

/** A dozen lines whose aliases stand for a billion nodes. */
const ALIAS_BOMB = [
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata:",
  "  name: trial-bomb",
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...["b", "c", "d", "e", "f", "g", "h", "i"].map(
    (n, i) => `${n}: &${n} [${Array(10).fill(`*${"abcdefghi"[i]}`).join(",")}]`,
  ),
  "",
].join("\n");

/** A policy for a kind only the probe sends: whether it serves shows whether the edit was applied. */
const GADGET_POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: { name: trial-gadget.example.com }
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{ apiGroups: ["example.com"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["gadgets"] }]
  validations: [{ expression: "object.spec.size < 10" }]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: { name: trial-gadget.example.com }
spec: { policyName: trial-gadget.example.com, validationActions: [Deny] }
`;

const GADGET_REVIEW = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "gadget",
    kind: { group: "example.com", version: "v1", kind: "Gadget" },
    resource: { group: "example.com", version: "v1", resource: "gadgets" },
    operation: "CREATE",
    name: "g",
    namespace: "default",
    object: {
      apiVersion: "example.com/v1",
      kind: "Gadget",
      metadata: { name: "g", namespace: "default" },
      spec: { size: 20 },
    },
    userInfo: { username: "trial" },
    dryRun: false,
  },
});

/** Whether the gadget probe is allowed now; undefined when it got no decision. */
function gadgetAllowed(port: number): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const r = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/validate",
        method: "POST",
        rejectUnauthorized: false,
        headers: { "content-type": "application/json" },
        timeout: 10_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => {
          try {
            resolve((JSON.parse(text) as { response: { allowed: boolean } }).response.allowed);
          } catch {
            resolve(undefined);
          }
        });
      },
    );
    r.on("error", () => resolve(undefined));
    r.on("timeout", () => r.destroy());
    r.end(GADGET_REVIEW);
  });
}

/** Waits (at most 30 s: a reload under load takes longer) for the probe to be decided `allowed`; whether it was. */
async function probeUntil(port: number, allowed: boolean): Promise<boolean> {
  for (let i = 0; i < 300; i++) {
    if ((await gadgetAllowed(port)) === allowed) return true;
    await sleep(100);
  }
  return false;
}

async function aliasEdits(dir: string, port: number, until: number): Promise<string> {
  const bomb = `${dir}/trial-bomb.yaml`;
  const gadget = `${dir}/trial-gadget.yaml`;
  let rounds = 0;
  let applied = 0;
  // At least one round, however short the phase.
  while (rounds === 0 || performance.now() < until - 3000) {
    rounds++;
    // The bomb and a valid new policy land together; then both go.
    writeFileSync(bomb, ALIAS_BOMB);
    writeFileSync(gadget, GADGET_POLICY);
    const added = await probeUntil(port, false);
    rmSync(bomb, { force: true });
    rmSync(gadget, { force: true });
    const removed = await probeUntil(port, true);
    if (added && removed) applied++;
  }
  return `${applied} of ${rounds} valid edits made beside an alias bomb were applied (and taken back); the bomb was refused each time`;
}

// ---------------------------------------------------------------------------------------------
// A large set reloaded under load.

const LARGE_SET = 500;

/**
 * Copies the generated policies into the served directory (under new names each round, so every
 * round adds them all), waits, and takes them out again. The copies are async, so this process's
 * own load loops are not held up by them.
 */
async function largeReload(dir: string, generated: string, until: number): Promise<string> {
  const files = readdirSync(generated);
  let rounds = 0;
  try {
    while (rounds === 0 || performance.now() < until - 6000) {
      rounds++;
      for (const f of files) await copyFile(`${generated}/${f}`, `${dir}/large-${rounds}-${f}`);
      await sleep(3000);
      for (const f of files) await rm(`${dir}/large-${rounds}-${f}`, { force: true });
      await sleep(3000);
    }
  } finally {
    for (const f of readdirSync(dir)) if (f.startsWith("large-")) rmSync(`${dir}/${f}`, { force: true });
  }
  return `${rounds} rounds of ${LARGE_SET} generated policies (none matches the trial's requests) added and removed, each reloaded beside the load`;
}

/** The server phases, in order; each returns trial.ts's phase result. */
export async function serverPhases<R, S extends TrialServer>(d: ServerPhaseDeps<R, S>): Promise<R[]> {
  const out: R[] = [];
  out.push(
    await d.phase(
      "alias bomb beside a valid edit on reload, 50 conns",
      d.server,
      d.seconds,
      50,
      (_c, n) => d.ordinary(n),
      (until) => aliasEdits(d.server.dir, d.server.port, until),
    ),
  );
  // Generated before the phase, so generating them does not stall this process's load.
  const generated = writeScalePolicies(generateScalePolicies(LARGE_SET, 0), "trial");
  try {
    out.push(
      await d.phase(
        `reloads of ${LARGE_SET} more policies under load, 50 conns`,
        d.server,
        d.seconds,
        50,
        (_c, n) => d.ordinary(n),
        (until) => largeReload(d.server.dir, generated, until),
      ),
    );
  } finally {
    rmSync(generated, { recursive: true, force: true });
  }
  out.push(await slowlorisPhase(d));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The event loop during a reload, in process.

export interface ReloadBlock {
  readonly policies: number;
  /** The longest the event loop was held while the set reloaded, and while quiet before it. */
  readonly maxBlockMs: number;
  readonly quietMaxMs: number;
  readonly reloadMs: number;
  /** Reviews answered on one keep-alive connection while the reload ran. */
  readonly answered: number;
}

export async function measureReloadBlock(policies: number): Promise<ReloadBlock> {
  const dir = writeScalePolicies(generateScalePolicies(policies, 0), "block");
  const reloads: string[] = [];
  const started = await startWebhook(
    {
      policies: [dir],
      host: "127.0.0.1",
      port: 0,
      metricsPort: 0,
      logLevel: "info",
      logStream: { write: (l: string) => (l.includes('"policy-reload"') ? reloads.push(l) : 0) > 0 },
      drainMs: 0,
      pollMs: 100,
      slowLane: false,
      readLimits: { maxFileBytes: 1024 * 1024, maxSetBytes: 256 * 1024 * 1024 },
    },
    () => {},
  );
  if (!started.ok) throw new Error(started.message);
  const { webhook } = started;
  const port = Number(new URL(webhook.url).port);
  const agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  const body = JSON.stringify(podReview());
  const ask = () =>
    new Promise<void>((resolve, reject) => {
      const r = httpsRequest(
        {
          host: "127.0.0.1",
          port,
          path: "/validate",
          method: "POST",
          agent,
          headers: { "content-type": "application/json" },
        },
        (res) => {
          res.resume();
          res.on("end", resolve);
        },
      );
      r.on("error", reject);
      r.end(body);
    });
  try {
    const h = monitorEventLoopDelay({ resolution: 5 });
    let answered = 0;
    let reloading = false;
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        await ask();
        if (reloading) answered++;
      }
    })();
    await sleep(1500);
    h.enable();
    await sleep(1000);
    const quietMaxMs = h.max / 1e6;
    h.reset();
    const before = reloads.length;
    const t0 = performance.now();
    reloading = true;
    const file = readdirSync(dir)[0] as string;
    writeFileSync(`${dir}/${file}`, "\n# touched\n", { flag: "a" });
    for (let i = 0; i < 1200 && reloads.length === before; i++) await sleep(50);
    const reloadMs = performance.now() - t0;
    reloading = false;
    h.disable();
    stop = true;
    await loop;
    if (reloads.length === before) throw new Error("no reload within 60 s");
    return { policies, maxBlockMs: h.max / 1e6, quietMaxMs, reloadMs, answered };
  } finally {
    agent.destroy();
    await webhook.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      "reload-block": { type: "boolean", default: false },
      policies: { type: "string", default: "2000" },
    },
    strict: true,
  });
  if (values["reload-block"]) {
    measureReloadBlock(Number(values.policies)).then(
      (r) =>
        console.log(
          `reload of ${r.policies} policies: longest event-loop block ${r.maxBlockMs.toFixed(0)} ms (quiet: ${r.quietMaxMs.toFixed(0)} ms), reload ${r.reloadMs.toFixed(0)} ms, ${r.answered} reviews answered on one connection meanwhile`,
        ),
      (e: unknown) => {
        console.error(e);
        process.exitCode = 2;
      },
    );
  }
}
