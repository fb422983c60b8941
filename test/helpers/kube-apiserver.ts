/**
 * A test Kubernetes API server that speaks the real wire protocol over HTTPS, for driving
 * `@kubernetes/client-node` and celgate's cluster code without a cluster. What it implements, and
 * where each behaviour comes from upstream (kubernetes/kubernetes, staging/src/k8s.io/apiserver):
 *
 * - Bearer-token authentication; anything else is 401 with a `Status` body (endpoints/handlers).
 * - Discovery: `/api`, `/api/v1`, `/apis`, `/apis/{group}/{version}` (APIVersions, APIGroupList,
 *   APIResourceList), as `kubectl` and client libraries read them.
 * - List with `limit`/`continue` (an opaque token; an expired one is 410 `Expired`, as
 *   storage/etcd3 answers after compaction) and `metadata.resourceVersion` on the list. Items of
 *   built-in kinds carry no apiVersion/kind, as the real server encodes typed lists.
 * - Watch (`?watch=true&resourceVersion=N`): a chunked stream of `{"type","object"}` lines, events
 *   after N replayed from a bounded history; N older than the history gets one `ERROR` event with
 *   a 410 `Expired` Status and the stream ends (storage/cacher/watch_cache.go "too old resource
 *   version"). `allowWatchBookmarks=true` streams get `BOOKMARK` events on `bookmark()`.
 * - SubjectAccessReview create (authorization.k8s.io/v1), answered by a function the test sets.
 * - Get, create, update and delete of one object by name (endpoints/handlers get.go, create.go,
 *   update.go, delete.go): create of an existing name is 409 AlreadyExists, an update whose
 *   metadata.resourceVersion is not the stored one is 409 Conflict (storage's optimistic
 *   concurrency), a missing name is 404 NotFound, and `forbid` answers 403 Forbidden as RBAC would.
 *   Watchers see the writes.
 * - `hold(plural)` keeps lists of one resource unanswered until released (a slow first sync).
 * - `goAway()` closes the listener and every connection; `comeBack()` listens again on the same port.
 * - Faults (kube-apiserver-faults.ts): `hang()`/`wake()` (SIGSTOP and SIGCONT), `expireWatches`
 *   (every watch answered with 410 Gone).
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server as TcpServer, Socket } from "node:net";
import { generateCertificate } from "../../src/adapters/server/tls.ts";
import { stringifyJson } from "../../src/request/json-deep.ts";
import { FaultGate } from "./kube-apiserver-faults.ts";
import {
  apiVersionOf,
  BUILT_IN,
  type KubeObject,
  type ResourceType,
  type SarAttributes,
  type SarResourceAttributes,
  type SarStatus,
  status,
  detailsOf,
} from "./kube-apiserver-types.ts";

export type { KubeObject, ResourceType, SarAttributes, SarStatus } from "./kube-apiserver-types.ts";

interface WatchEvent {
  readonly rv: number;
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: KubeObject;
}

interface Watcher {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly bookmarks: boolean;
  readonly res: ServerResponse;
}

export interface KubeApiServerOptions {
  /** Events kept for watch replay; older resourceVersions get 410. Default 10,000. */
  readonly history?: number;
  /**
   * Send every watch that allowed them a BOOKMARK this often, as the API server's watch cache does
   * once a minute (cacher.go defaultBookmarkFrequency); default never (tests call `bookmark()`).
   */
  readonly bookmarkEveryMs?: number;
}

export class KubeApiServer {
  readonly token = `test-token-${Math.random().toString(36).slice(2)}`;
  readonly ca: string;
  private readonly cert: string;
  private readonly key: string;
  private server: Server | undefined;
  private front: TcpServer | undefined;
  private readonly gate = new FaultGate();
  private readonly sockets = new Set<Socket>();
  private port = 0;
  private rv = 100;
  private readonly types: ResourceType[] = [...BUILT_IN];
  /** key: apiVersion/kind → namespace/name → object */
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private history: WatchEvent[] = [];
  private readonly historyLimit: number;
  private readonly bookmarkEveryMs: number | undefined;
  private bookmarkTimer: NodeJS.Timeout | undefined;
  private readonly watchers = new Set<Watcher>();
  /** Every request's method and path with query, in order. */
  readonly requests: string[] = [];
  sarCalls = 0;
  /**
   * Requests refused with 403, as RBAC refuses them (`name` is "" for a list or watch); default:
   * none.
   */
  forbid: (
    verb: "get" | "list" | "watch" | "create" | "update" | "delete",
    plural: string,
    name: string,
  ) => boolean = () => false;
  /** Answers SubjectAccessReviews; default: allow nothing. */
  authorize: (a: SarAttributes) => SarStatus | Promise<SarStatus> = () => ({ allowed: false });

  constructor(options: KubeApiServerOptions = {}) {
    this.historyLimit = options.history ?? 10_000;
    this.bookmarkEveryMs = options.bookmarkEveryMs;
    const now = Date.now();
    const authority = generateCertificate({
      subject: { organization: "celgate-test", commonName: "test kube-apiserver CA" },
      notBefore: new Date(now - 3_600_000),
      notAfter: new Date(now + 86_400_000),
      isCA: true,
      keyUsage: ["keyCertSign", "cRLSign"],
    });
    const serving = generateCertificate({
      subject: { organization: "celgate-test", commonName: "kube-apiserver" },
      notBefore: new Date(now - 3_600_000),
      notAfter: new Date(now + 86_400_000),
      isCA: false,
      keyUsage: ["digitalSignature"],
      extKeyUsage: ["serverAuth"],
      hosts: ["127.0.0.1", "localhost"],
      issuer: authority,
    });
    this.ca = authority.cert;
    this.cert = serving.cert;
    this.key = serving.key;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** A kubeconfig for this server and its token, as `kubectl config view --raw` writes one. */
  kubeconfig(token = this.token): string {
    const ca = Buffer.from(this.ca).toString("base64");
    return [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "  - name: test",
      `    cluster: { server: "${this.url}", certificate-authority-data: "${ca}" }`,
      "users:",
      "  - name: celgate",
      `    user: { token: "${token}" }`,
      "contexts:",
      "  - name: test",
      "    context: { cluster: test, user: celgate }",
      "current-context: test",
      "",
    ].join("\n");
  }

  async start(): Promise<void> {
    const server = createServer({ cert: this.cert, key: this.key }, (req, res) => {
      this.gate.whenAwake(() => {
        void this.handle(req, res).catch((e: unknown) => {
          if (!res.headersSent) this.send(res, 500, status(500, "InternalError", String(e)));
          else res.destroy();
        });
      });
    });
    const track = (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    };
    server.on("secureConnection", track);
    const front = this.gate.frontDoor(server, track);
    await new Promise<void>((resolve, reject) => {
      front.once("error", reject);
      front.listen(this.port, "127.0.0.1", () => resolve());
    });
    const address = front.address();
    if (address && typeof address === "object") this.port = address.port;
    this.server = server;
    this.front = front;
    if (this.bookmarkEveryMs !== undefined) {
      this.bookmarkTimer = setInterval(() => this.bookmark(), this.bookmarkEveryMs);
      this.bookmarkTimer.unref();
    }
  }

  /** Stops answering: the listener closes and every open connection (watches too) is cut. */
  async goAway(): Promise<void> {
    const front = this.front;
    this.server = undefined;
    this.front = undefined;
    clearInterval(this.bookmarkTimer);
    this.gate.drop();
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (front) await new Promise<void>((resolve) => front.close(() => resolve()));
  }

  /**
   * Stops answering without closing anything, as SIGSTOP does: connections are accepted and held,
   * requests and watch events wait. `wake()` lets them through.
   */
  hang(): void {
    this.gate.hang();
  }

  wake(): void {
    this.gate.wake(this.server);
  }

  /** While true, every watch is answered with one ERROR event of 410 Gone, and ends. */
  set expireWatches(on: boolean) {
    this.gate.expireWatches = on;
  }

  /** Listens again on the same port. */
  comeBack(): Promise<void> {
    return this.start();
  }

  async stop(): Promise<void> {
    await this.goAway();
  }

  /** Serves a custom resource kind (as a CRD would), found through discovery. */
  addType(t: ResourceType): void {
    this.types.push(t);
  }

  /** Creates or replaces an object; watchers see ADDED or MODIFIED. Returns its resourceVersion. */
  put(object: KubeObject): string {
    const t = this.typeOf(object.apiVersion, object.kind);
    const store = this.storeOf(t);
    const key = `${object.metadata.namespace ?? ""}/${object.metadata.name}`;
    const existed = store.has(key);
    this.rv++;
    const stored = structuredClone(object);
    stored.metadata = {
      ...stored.metadata,
      resourceVersion: String(this.rv),
      uid: (store.get(key)?.metadata.uid as string | undefined) ?? `uid-${this.rv}`,
    };
    if (t.namespaced && !stored.metadata.namespace) stored.metadata.namespace = "default";
    if (t.group === "" && t.kind === "Namespace") namespaceStrategy(stored);
    store.set(key, stored);
    this.emit({ rv: this.rv, type: existed ? "MODIFIED" : "ADDED", object: stored });
    return String(this.rv);
  }

  /** Many objects at once without a watch event per object (for large lists). */
  putMany(objects: readonly KubeObject[]): void {
    for (const o of objects) {
      const t = this.typeOf(o.apiVersion, o.kind);
      this.rv++;
      const stored = {
        ...o,
        metadata: { ...o.metadata, resourceVersion: String(this.rv), uid: `uid-${this.rv}` },
      };
      this.storeOf(t).set(`${o.metadata.namespace ?? ""}/${o.metadata.name}`, stored);
    }
    // Watches from before cannot be replayed past a gap: later watches start from here.
    this.history = [];
  }

  /** The stored object, or undefined. */
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.storeOf(this.typeOf(apiVersion, kind)).get(`${namespace ?? ""}/${name}`);
  }

  delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): boolean {
    const store = this.storeOf(this.typeOf(apiVersion, kind));
    const key = `${namespace ?? ""}/${name}`;
    const old = store.get(key);
    if (!old) return false;
    store.delete(key);
    this.rv++;
    this.emit({
      rv: this.rv,
      type: "DELETED",
      object: { ...old, metadata: { ...old.metadata, resourceVersion: String(this.rv) } },
    });
    return true;
  }

  /**
   * Forgets the watch history, as etcd compaction does: every open watch gets an ERROR 410 and
   * ends, and a watch or continue token from before answers 410 too.
   */
  compact(): void {
    this.history = [];
    // A compaction follows some write: what was read before it is older than what it keeps.
    this.rv++;
    this.compactedAt = this.rv;
    for (const w of this.watchers) {
      this.writeEvent(w.res, {
        type: "ERROR",
        object: status(410, "Expired", `too old resource version: ${this.rv - 1} (${this.rv})`),
      });
      this.gate.whenAwake(() => w.res.end());
    }
    this.watchers.clear();
  }
  private compactedAt = 0;

  /** Sends a BOOKMARK with the current resourceVersion to every watch that allowed them. */
  bookmark(): number {
    let sent = 0;
    for (const w of this.watchers) {
      if (!w.bookmarks) continue;
      this.writeEvent(w.res, {
        type: "BOOKMARK",
        object: {
          apiVersion: apiVersionOf(w.type),
          kind: w.type.kind,
          // Only the resourceVersion: the initial-events-end annotation marks the one bookmark
          // that ends a watch's initial events (storage/util.go AnnotateInitialEventsEndBookmark),
          // never a periodic one (cacher/cache_watcher.go).
          metadata: { resourceVersion: String(this.rv) },
        },
      });
      sent++;
    }
    return sent;
  }

  /** Open watch streams, per plural resource name. */
  watchCount(plural?: string): number {
    return [...this.watchers].filter((w) => plural === undefined || w.type.plural === plural).length;
  }

  // -------------------------------------------------------------------------------------------

  private typeOf(apiVersion: string, kind: string): ResourceType {
    const t = this.types.find((x) => apiVersionOf(x) === apiVersion && x.kind === kind);
    if (!t) throw new Error(`test apiserver: no type ${apiVersion} ${kind}`);
    return t;
  }

  /** Objects are stored once per group and kind: every served version shows the same objects. */
  private storeOf(t: ResourceType): Map<string, KubeObject> {
    const key = `${t.group}/${t.kind}`;
    let s = this.objects.get(key);
    if (!s) {
      s = new Map();
      this.objects.set(key, s);
    }
    return s;
  }

  private emit(e: WatchEvent): void {
    this.history.push(e);
    if (this.history.length > this.historyLimit) this.history.shift();
    for (const w of this.watchers) {
      if (!this.sameKind(w.type, e.object)) continue;
      if (w.namespace !== undefined && e.object.metadata.namespace !== w.namespace) continue;
      this.writeEvent(w.res, { type: e.type, object: this.asVersion(w.type, e.object) });
    }
  }

  private sameKind(t: ResourceType, o: KubeObject): boolean {
    const group = o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "";
    return t.kind === o.kind && t.group === group;
  }

  private asVersion(t: ResourceType, o: KubeObject): KubeObject {
    return o.apiVersion === apiVersionOf(t) ? o : { ...o, apiVersion: apiVersionOf(t) };
  }

  // Written as the API server's Go encoder writes them: an int64 (a bigint here) as its digits.
  private writeEvent(res: ServerResponse, event: { type: string; object: unknown }): void {
    const line = `${stringifyJson(event)}\n`;
    this.gate.whenAwake(() => {
      if (!res.writableEnded && !res.destroyed) res.write(line);
    });
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    const text = stringifyJson(body);
    res.writeHead(code, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "https://x");
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      this.send(res, 401, status(401, "Unauthorized", "Unauthorized"));
      return;
    }
    const parts = url.pathname.split("/").filter((p) => p !== "");
    if (req.method === "POST" && url.pathname === "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      await this.subjectAccessReview(req, res);
      return;
    }
    if (req.method === "GET" && this.discovery(parts, res)) return;
    const route = this.route(parts);
    if (!route) {
      this.send(res, 404, status(404, "NotFound", `the server could not find the requested resource`, {}));
      return;
    }
    if (route.name !== undefined) {
      await this.named(req, res, route.type, route.namespace, route.name);
      return;
    }
    if (req.method === "POST") {
      await this.create(req, res, route.type, route.namespace);
      return;
    }
    if (req.method !== "GET") {
      this.send(res, 405, status(405, "MethodNotAllowed", `${req.method} is not served`));
      return;
    }
    const listVerb = url.searchParams.get("watch") === "true" ? "watch" : "list";
    if (this.forbid(listVerb, route.type.plural, ""))
      return this.forbidden(res, listVerb, route.type, undefined, route.namespace);
    if (listVerb === "watch") this.watch(route.type, route.namespace, url, res);
    else {
      await this.holds.get(route.type.plural);
      this.list(route.type, route.namespace, url, res);
    }
  }

  private readonly holds = new Map<string, Promise<void>>();

  /** Lists of `plural` wait until the function returned is called. */
  hold(plural: string): () => void {
    let release = () => {};
    this.holds.set(
      plural,
      new Promise<void>((resolve) => {
        release = () => {
          this.holds.delete(plural);
          resolve();
        };
      }),
    );
    return release;
  }

  /** `plural.group "name"`, as the API server names an object in its error messages. */
  private qualified(type: ResourceType, name: string): string {
    return `${type.plural}${type.group === "" ? "" : `.${type.group}`} "${name}"`;
  }

  private async body(req: IncomingMessage): Promise<KubeObject | undefined> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
      return parsed !== null && typeof parsed === "object" ? (parsed as KubeObject) : undefined;
    } catch {
      return undefined;
    }
  }

  /** As the RBAC authorizer's refusal reaches the client (endpoints/handlers/responsewriters/errors.go). */
  private forbidden(
    res: ServerResponse,
    verb: string,
    type: ResourceType,
    name: string | undefined,
    namespace?: string,
  ): void {
    const what =
      name === undefined
        ? `${type.plural}${type.group === "" ? "" : `.${type.group}`}`
        : this.qualified(type, name);
    const where = namespace === undefined ? "" : ` in the namespace "${namespace}"`;
    this.send(
      res,
      403,
      status(
        403,
        "Forbidden",
        `${what} is forbidden: User "system:serviceaccount:test:celgate" cannot ${verb} resource "${type.plural}" in API group "${type.group}"${where}`,
        detailsOf(type.plural, type.group, name),
      ),
    );
  }

  private async create(
    req: IncomingMessage,
    res: ServerResponse,
    type: ResourceType,
    namespace: string | undefined,
  ): Promise<void> {
    const object = await this.body(req);
    const name = object?.metadata?.name;
    if (!object || typeof name !== "string" || name === "") {
      this.send(res, 422, status(422, "Invalid", "metadata.name: Required value"));
      return;
    }
    if (this.forbid("create", type.plural, name)) return this.forbidden(res, "create", type, name, namespace);
    const ns = type.namespaced ? (namespace ?? object.metadata.namespace) : undefined;
    if (this.storeOf(type).has(`${ns ?? ""}/${name}`)) {
      this.send(
        res,
        409,
        status(
          409,
          "AlreadyExists",
          `${this.qualified(type, name)} already exists`,
          detailsOf(type.plural, type.group, name),
        ),
      );
      return;
    }
    const { resourceVersion: _rv, ...metadata } = object.metadata;
    this.put({
      ...object,
      apiVersion: apiVersionOf(type),
      kind: type.kind,
      metadata: { ...metadata, ...(ns ? { namespace: ns } : {}) },
    });
    this.send(res, 201, this.storeOf(type).get(`${ns ?? ""}/${name}`));
  }

  /** GET, PUT or DELETE of one object. */
  private async named(
    req: IncomingMessage,
    res: ServerResponse,
    type: ResourceType,
    namespace: string | undefined,
    name: string,
  ): Promise<void> {
    const key = `${namespace ?? ""}/${name}`;
    const stored = this.storeOf(type).get(key);
    const verb =
      req.method === "GET"
        ? "get"
        : req.method === "PUT"
          ? "update"
          : req.method === "DELETE"
            ? "delete"
            : undefined;
    if (verb === undefined) {
      this.send(res, 405, status(405, "MethodNotAllowed", `${req.method} is not served`));
      return;
    }
    const object = verb === "update" ? await this.body(req) : undefined;
    if (this.forbid(verb, type.plural, name)) return this.forbidden(res, verb, type, name, namespace);
    if (!stored) {
      this.send(
        res,
        404,
        status(
          404,
          "NotFound",
          `${this.qualified(type, name)} not found`,
          detailsOf(type.plural, type.group, name),
        ),
      );
      return;
    }
    if (verb === "get") return this.send(res, 200, this.asVersion(type, stored));
    if (verb === "delete") {
      this.delete(stored.apiVersion, stored.kind, namespace, name);
      return this.send(res, 200, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { ...detailsOf(type.plural, type.group, name), uid: stored.metadata.uid },
      });
    }
    if (!object || object.metadata?.name !== name) {
      this.send(
        res,
        400,
        status(400, "BadRequest", "the name of the object does not match the name on the URL"),
      );
      return;
    }
    if (
      object.metadata.resourceVersion !== undefined &&
      object.metadata.resourceVersion !== stored.metadata.resourceVersion
    ) {
      this.send(
        res,
        409,
        status(
          409,
          "Conflict",
          `Operation cannot be fulfilled on ${this.qualified(type, name)}: the object has been modified; please apply your changes to the latest version and try again`,
          detailsOf(type.plural, type.group, name),
        ),
      );
      return;
    }
    this.put({
      ...object,
      apiVersion: apiVersionOf(type),
      kind: type.kind,
      metadata: { ...object.metadata, ...(namespace ? { namespace } : {}) },
    });
    this.send(res, 200, this.storeOf(type).get(key));
  }

  private discovery(parts: string[], res: ServerResponse): boolean {
    const resources = (group: string, version: string) => ({
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: group === "" ? version : `${group}/${version}`,
      resources: this.types
        .filter((t) => t.group === group && t.version === version)
        .map((t) => ({
          name: t.plural,
          singularName: t.kind.toLowerCase(),
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
        })),
    });
    if (parts.length === 1 && parts[0] === "api") {
      this.send(res, 200, { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] });
      return true;
    }
    if (parts.length === 2 && parts[0] === "api" && parts[1] === "v1") {
      this.send(res, 200, resources("", "v1"));
      return true;
    }
    if (parts.length === 1 && parts[0] === "apis") {
      const groups = [...new Set(this.types.filter((t) => t.group !== "").map((t) => t.group))];
      this.send(res, 200, {
        kind: "APIGroupList",
        apiVersion: "v1",
        groups: groups.map((name) => {
          const versions = [...new Set(this.types.filter((t) => t.group === name).map((t) => t.version))];
          const gv = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
          return { name, versions: gv, preferredVersion: gv[0] };
        }),
      });
      return true;
    }
    if (parts.length === 3 && parts[0] === "apis") {
      const [, group, version] = parts as [string, string, string];
      if (!this.types.some((t) => t.group === group && t.version === version)) return false;
      this.send(res, 200, resources(group, version));
      return true;
    }
    return false;
  }

  /** /api/v1/[namespaces/NS/]PLURAL or /apis/G/V/[namespaces/NS/]PLURAL */
  private route(
    parts: string[],
  ): { type: ResourceType; namespace: string | undefined; name: string | undefined } | undefined {
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === "api") {
      group = "";
      version = parts[1] ?? "";
      rest = parts.slice(2);
    } else if (parts[0] === "apis") {
      group = parts[1] ?? "";
      version = parts[2] ?? "";
      rest = parts.slice(3);
    } else return undefined;
    let namespace: string | undefined;
    if ((rest.length === 3 || rest.length === 4) && rest[0] === "namespaces") {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    if (rest.length !== 1 && rest.length !== 2) return undefined;
    const type = this.types.find((t) => t.group === group && t.version === version && t.plural === rest[0]);
    if (!type || (namespace !== undefined && !type.namespaced)) return undefined;
    return { type, namespace, name: rest[1] };
  }

  private sorted(type: ResourceType, namespace: string | undefined): [string, KubeObject][] {
    const all = [...this.storeOf(type).entries()].filter(
      ([, o]) => namespace === undefined || o.metadata.namespace === namespace,
    );
    return all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private list(type: ResourceType, namespace: string | undefined, url: URL, res: ServerResponse): void {
    const limit = Number(url.searchParams.get("limit") ?? "0");
    const token = url.searchParams.get("continue");
    let start = "";
    let listRv = this.rv;
    if (token) {
      let decoded: { rv: number; start: string };
      try {
        decoded = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as { rv: number; start: string };
      } catch {
        this.send(res, 400, status(400, "BadRequest", "continue key is not valid"));
        return;
      }
      if (decoded.rv !== LATEST && decoded.rv < this.compactedAt) {
        // storage/etcd3/errors.go handleCompactedErrorForPaging: a token that goes on from the same
        // key at the latest resourceVersion comes with the 410, for a client that accepts an
        // inconsistent list.
        this.send(res, 410, {
          ...status(410, "Expired", INCONSISTENT_CONTINUE),
          metadata: {
            continue: Buffer.from(JSON.stringify({ rv: LATEST, start: decoded.start })).toString("base64"),
          },
        });
        return;
      }
      start = decoded.start;
      listRv = decoded.rv === LATEST ? this.rv : decoded.rv;
    }
    const all = this.sorted(type, namespace).filter(([k]) => k > start);
    const page = limit > 0 ? all.slice(0, limit) : all;
    const more = limit > 0 && all.length > limit;
    const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
    if (more) {
      const last = page[page.length - 1]![0];
      metadata.continue = Buffer.from(JSON.stringify({ rv: listRv, start: last })).toString("base64");
      metadata.remainingItemCount = all.length - page.length;
    }
    const items = page.map(([, o]) => {
      const v = this.asVersion(type, o);
      if (!type.builtIn) return v;
      const { apiVersion: _a, kind: _k, ...rest } = v;
      return rest;
    });
    this.send(res, 200, { kind: `${type.kind}List`, apiVersion: apiVersionOf(type), metadata, items });
  }

  private watch(type: ResourceType, namespace: string | undefined, url: URL, res: ServerResponse): void {
    const rvText = url.searchParams.get("resourceVersion") ?? "";
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    const matches = (o: KubeObject) =>
      this.sameKind(type, o) && (namespace === undefined || o.metadata.namespace === namespace);
    if (this.gate.expireWatches) {
      this.writeEvent(res, {
        type: "ERROR",
        object: status(410, "Expired", `too old resource version: ${rvText} (${this.rv})`),
      });
      res.end();
      return;
    }
    if (rvText === "" || rvText === "0") {
      for (const [, o] of this.sorted(type, namespace))
        this.writeEvent(res, { type: "ADDED", object: this.asVersion(type, o) });
    } else {
      const from = Number(rvText);
      const oldest = this.history[0]?.rv ?? this.rv + 1;
      if (from < this.compactedAt || (from < oldest - 1 && from < this.rv)) {
        this.writeEvent(res, {
          type: "ERROR",
          object: status(410, "Expired", `too old resource version: ${from} (${oldest - 1})`),
        });
        res.end();
        return;
      }
      for (const e of this.history)
        if (e.rv > from && matches(e.object))
          this.writeEvent(res, { type: e.type, object: this.asVersion(type, e.object) });
    }
    const watcher: Watcher = {
      type,
      namespace,
      bookmarks: url.searchParams.get("allowWatchBookmarks") === "true",
      res,
    };
    this.watchers.add(watcher);
    // The API server ends a watch cleanly at its timeoutSeconds (endpoints/handlers/watch.go); a
    // reflector then opens the next one from the last resourceVersion it saw.
    const timeoutSeconds = Number(url.searchParams.get("timeoutSeconds") ?? "0");
    const timer =
      timeoutSeconds > 0
        ? setTimeout(() => {
            this.watchers.delete(watcher);
            this.gate.whenAwake(() => res.end());
          }, timeoutSeconds * 1000)
        : undefined;
    timer?.unref();
    res.on("close", () => {
      clearTimeout(timer);
      this.watchers.delete(watcher);
    });
  }

  private async subjectAccessReview(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: { apiVersion?: string; kind?: string; spec?: Record<string, unknown> };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
    } catch {
      this.send(res, 400, status(400, "BadRequest", "body is not JSON"));
      return;
    }
    const spec = body.spec ?? {};
    if (body.kind !== "SubjectAccessReview" || typeof spec.user !== "string") {
      // As the API server refuses one (authorization/validation: ValidateSubjectAccessReviewSpec).
      const cause = {
        reason: "FieldValueInvalid",
        message: 'Invalid value: "": at least one of user or group must be specified',
        field: "spec.user",
      };
      this.send(
        res,
        422,
        status(422, "Invalid", `.authorization.k8s.io "" is invalid: spec.user: ${cause.message}`, {
          group: "authorization.k8s.io",
          causes: [cause],
        }),
      );
      return;
    }
    this.sarCalls++;
    const attrs: SarAttributes = {
      user: spec.user,
      groups: (spec.groups as string[] | undefined) ?? [],
      ...(typeof spec.uid === "string" ? { uid: spec.uid } : {}),
      ...(spec.extra ? { extra: spec.extra as Record<string, string[]> } : {}),
      ...(spec.resourceAttributes
        ? { resourceAttributes: spec.resourceAttributes as SarResourceAttributes }
        : {}),
      ...(spec.nonResourceAttributes
        ? { nonResourceAttributes: spec.nonResourceAttributes as Record<string, string> }
        : {}),
    };
    const answer = await this.authorize(attrs);
    // The API server's metadata holds only managedFields here (no zero creationTimestamp).
    this.send(res, 201, { ...body, metadata: {}, status: answer });
  }
}

/** A continue token's resourceVersion that goes on at the latest one (storage.EncodeContinue's -1). */
const LATEST = -1;

const INCONSISTENT_CONTINUE =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/**
 * What the API server does to a Namespace it stores (pkg/registry/core/namespace/strategy.go:
 * PrepareForCreate sets phase Active and the kubernetes finalizer; the defaulting of
 * pkg/apis/core/v1 writes the `kubernetes.io/metadata.name` label, which a namespaceSelector can
 * select on).
 */
function namespaceStrategy(ns: KubeObject): void {
  ns.metadata.labels = { ...ns.metadata.labels, "kubernetes.io/metadata.name": ns.metadata.name };
  const spec = (ns.spec ?? {}) as { finalizers?: string[] };
  if (spec.finalizers === undefined) ns.spec = { ...spec, finalizers: ["kubernetes"] };
  const status = (ns.status ?? {}) as { phase?: string };
  if (status.phase === undefined) ns.status = { ...status, phase: "Active" };
}

/** Starts a test API server on 127.0.0.1, stopped when the test ends. */
export async function startKubeApiServer(
  t: { after(fn: () => Promise<void> | void): void },
  options: KubeApiServerOptions = {},
): Promise<KubeApiServer> {
  const api = new KubeApiServer(options);
  await api.start();
  t.after(() => api.stop());
  return api;
}
