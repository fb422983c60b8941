/**
 * The inputs of the Decisions differential test and what celgate decides about them: every case of
 * every suite in policies/ (the suites `celgate test policies` runs), and generated combinations of
 * a suite's policies with objects, operations, namespaces and users taken from all the suites
 * (seeded, so a run is reproduced by its seed). Generated cases are written as a suite file and run
 * by the same suite runner, so both kinds reach celgate by `celgate test`'s own path.
 *
 * The inputs are made the same on both sides before celgate runs them: the API server adds
 * `system:authenticated` to an impersonated user's groups (k8s.io/apiserver/pkg/endpoints/filters/
 * impersonation.go) and sets `request.dryRun` on a `?dryRun=All` request, so celgate's request gets
 * both too.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, stringify } from "yaml";
import { decodeSavedReview } from "../../src/adapters/admission/saved.ts";
import type { AdmissionRequest, UserInfo } from "../../src/request/types.ts";
import { fileSuiteReader } from "../../src/sources/suites.ts";
import type { PreparedCase } from "../../src/suite/prepare.ts";
import { type CaseActual, type LoadedSuite, loadSuiteFile, runLoadedSuite } from "../../src/suite/run.ts";
import type { JsonObject, ObjectSource } from "../../src/suite/types.ts";
import type { KubeManifest } from "../helpers/kube-objects.ts";
import { seededRandom } from "../helpers/random.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const POLICIES = join(ROOT, "policies");
const AUTHENTICATED = "system:authenticated";

export interface DecisionCase {
  /** `<suite> / <case name>`, or `<suite> / generated #<n>`. */
  readonly name: string;
  /** The request celgate evaluated. */
  readonly request: AdmissionRequest;
  /** The object as the case wrote it (namespaced), sent to the API server as it is. */
  readonly object: JsonObject | undefined;
  /** The stored object of an UPDATE, or the object a DELETE deletes, as written (namespaced). */
  readonly oldObject: JsonObject | undefined;
  readonly namespaceObject: JsonObject | undefined;
  /** What `celgate test` decided. */
  readonly actual: CaseActual;
}

export interface SuiteInput {
  readonly name: string;
  readonly file: string;
  /** Every object of the suite's policy files and resources files, in order. */
  readonly manifests: readonly KubeManifest[];
  readonly authorizer: readonly Record<string, unknown>[];
  readonly cases: readonly DecisionCase[];
}

function manifestsOf(text: string): KubeManifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((o): o is KubeManifest => typeof o === "object" && o !== null && !Array.isArray(o));
}

/** The user as the API server sees an impersonated one. */
export function asImpersonated(user: UserInfo): UserInfo {
  if (user.username === "system:anonymous" || user.groups.includes(AUTHENTICATED)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED] };
}

function sameInputs(l: LoadedSuite): LoadedSuite {
  if (!l.loaded) return l;
  const cases: PreparedCase[] = l.loaded.cases.map((pc) => ({
    ...pc,
    request: { ...pc.request, userInfo: asImpersonated(pc.request.userInfo), dryRun: true },
  }));
  return { ...l, loaded: { ...l.loaded, cases } };
}

async function sourceObject(source: ObjectSource | undefined): Promise<JsonObject | undefined> {
  if (source === undefined) return undefined;
  if (source.inline) return structuredClone(source.inline);
  const [m] = manifestsOf(await readFile(source.file.resolved, "utf8"));
  return m as JsonObject | undefined;
}

function namespaced(object: JsonObject | undefined, request: AdmissionRequest): JsonObject | undefined {
  if (object === undefined || request.namespace === "" || object.kind === "Namespace") return object;
  const metadata = (object.metadata ?? {}) as JsonObject;
  return { ...object, metadata: { ...metadata, namespace: request.namespace } };
}

/** Loads and runs one suite file as `celgate test` does; a broken suite is an error here. */
async function runSuite(file: string, release: string, label: string): Promise<DecisionCase[]> {
  const loaded = sameInputs(
    await loadSuiteFile(file, fileSuiteReader, {
      kubernetesVersion: release,
      decodeReview: decodeSavedReview,
    }),
  );
  if (loaded.broken || !loaded.loaded)
    throw new Error(`${file} is broken: ${loaded.diagnostics.map((d) => d.message).join("; ")}`);
  const results = runLoadedSuite(loaded).cases;
  const out: DecisionCase[] = [];
  for (const [i, pc] of loaded.loaded.cases.entries()) {
    const result = results[i];
    if (result === undefined || pc.spec.review) throw new Error(`${file}: case ${i} has no result`);
    out.push({
      name: `${label} / ${pc.spec.name}`,
      request: pc.request,
      object: namespaced(await sourceObject(pc.spec.object.value), pc.request),
      oldObject: namespaced(await sourceObject(pc.spec.oldObject?.value), pc.request),
      namespaceObject: pc.namespaceObject,
      actual: result.actual,
    });
  }
  return out;
}

interface SuiteFileShape {
  policies?: string[];
  resources?: string[];
  authorizer?: Record<string, unknown>[];
}

/** Every suite of policies/, its objects, and its cases with celgate's decisions. */
export async function suiteInputs(release: string): Promise<SuiteInput[]> {
  const files = (await readdir(POLICIES)).filter((f) => f.endsWith(".test.yaml")).sort();
  const out: SuiteInput[] = [];
  for (const f of files) {
    const file = join(POLICIES, f);
    const shape = (manifestsOf(await readFile(file, "utf8"))[0] ?? {}) as SuiteFileShape;
    const manifests: KubeManifest[] = [];
    for (const p of [...(shape.policies ?? []), ...(shape.resources ?? [])])
      manifests.push(...manifestsOf(await readFile(join(POLICIES, p), "utf8")));
    const name = f.replace(/\.test\.yaml$/, "");
    out.push({
      name,
      file,
      manifests,
      authorizer: shape.authorizer ?? [],
      cases: await runSuite(file, release, name),
    });
  }
  return out;
}

/** The users generated cases are sent as: plain, grouped, a service account, and the default. */
const USERS: readonly UserInfo[] = [
  { username: "celgate", groups: [AUTHENTICATED] },
  { username: "developer", groups: ["developers"] },
  { username: "platform-admin", groups: ["platform"] },
  {
    username: "system:serviceaccount:kube-system:replicaset-controller",
    groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system"],
  },
  { username: "auditor", uid: "u-1", groups: ["viewers"], extra: { team: ["payments"] } },
];

const OPERATIONS = ["CREATE", "CREATE", "UPDATE", "DELETE"] as const;

function pick<T>(random: () => number, items: readonly T[]): T {
  if (items.length === 0) throw new Error("pick from an empty list");
  return items[Math.floor(random() * items.length)] as T;
}

function metadataOf(o: JsonObject): JsonObject {
  return (o.metadata ?? {}) as JsonObject;
}

/**
 * `perSuite` generated cases for each suite: an object written by any suite's case (no subresource),
 * one of the operations, a namespace object some case of this suite uses (or none), and a user. An
 * UPDATE's stored object is the same object with other labels, so only labels change (the API
 * server's own validation refuses most other changes of a Pod before validating admission).
 */
export async function generatedInputs(
  suites: readonly SuiteInput[],
  release: string,
  dir: string,
  seed: number,
  perSuite: number,
): Promise<SuiteInput[]> {
  const random = seededRandom(seed);
  const pool = new Map<string, JsonObject>();
  for (const s of suites)
    for (const c of s.cases)
      if (c.object && c.request.subResource === undefined && c.request.operation === "CREATE")
        pool.set(JSON.stringify(c.object), c.object);
  const objects = [...pool.values()];
  const out: SuiteInput[] = [];
  for (const s of suites) {
    const shape = (manifestsOf(await readFile(s.file, "utf8"))[0] ?? {}) as SuiteFileShape;
    const namespaceObjects = [
      undefined,
      ...new Map(
        s.cases.flatMap((c) =>
          c.namespaceObject ? [[JSON.stringify(c.namespaceObject), c.namespaceObject]] : [],
        ),
      ).values(),
    ];
    const cases: Record<string, unknown>[] = [];
    for (let i = 0; i < perSuite; i++) {
      const written: JsonObject = structuredClone(pick(random, objects));
      // The pool's objects are namespaced by their own case; the generated case names its own.
      const { namespace: _namespace, ...metadata } = metadataOf(written);
      const object: JsonObject = { ...written, metadata };
      const operation = pick(random, OPERATIONS);
      const nsObject = pick(random, namespaceObjects);
      const namespace = nsObject
        ? String(metadataOf(nsObject).name)
        : pick(random, ["team-a", "team-b", "default"]);
      const c: Record<string, unknown> = {
        name: `generated #${i + 1}`,
        // Required by the suite format; the comparison uses what celgate decided, not this.
        expect: { allowed: true },
        operation,
        namespace,
        userInfo: pick(random, USERS),
        object,
        ...(nsObject ? { namespaceObject: nsObject } : {}),
      };
      if (object.kind === "Namespace") {
        c.namespace = undefined;
        c.namespaceObject = undefined;
      }
      if (operation === "UPDATE")
        c.oldObject = { ...object, metadata: { ...metadataOf(object), labels: { generated: "old" } } };
      cases.push(Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)));
    }
    const file = join(dir, `${s.name}.generated.test.yaml`);
    await writeFile(
      file,
      stringify({
        apiVersion: "celgate.dev/v1alpha1",
        kind: "PolicyTest",
        metadata: { name: `${s.name}-generated` },
        policies: (shape.policies ?? []).map((p) => join(POLICIES, p)),
        ...(shape.resources ? { resources: shape.resources.map((p) => join(POLICIES, p)) } : {}),
        ...(shape.authorizer ? { authorizer: shape.authorizer } : {}),
        cases,
      }),
    );
    out.push({
      name: `${s.name} (generated)`,
      file,
      manifests: s.manifests,
      authorizer: s.authorizer,
      cases: await runSuite(file, release, `${s.name} (generated)`),
    });
  }
  return out;
}
