/**
 * What the API server decided about a request, brought to the shape of what `celgate test`
 * decided (CaseActual), and the differences between the two.
 *
 * Normalisation, kept to the least that makes the two comparable:
 * - Allowed: a 2xx answer; for a CREATE also 409 AlreadyExists (the object a generated case
 *   creates may exist; admission ran before the store refused it, k8s.io/apiserver/pkg/registry/
 *   generic/registry/store.go Create); for a CONNECT, any answer that is not an admission denial (the
 *   connection itself fails afterwards: no Pod here runs on a node).
 * - The status message: the API server wraps an admission error as `<resource> "<name>" is
 *   forbidden: <message>` (apierrors.NewForbidden in k8s.io/apiserver/pkg/admission/errors.go);
 *   the wrapping is cut, as `celgate serve` answers the admission message the server wraps.
 * - Audit annotations: the server's event also carries those of authorization and PodSecurity;
 *   only the keys a policy can write are compared (`<policy>/<key>`, and
 *   `validation.policy.admission.k8s.io/validation_failure`, compared as JSON).
 * - Warnings: only those a policy gave (`... AdmissionPolicy '<name>' ...`); the API server adds
 *   its own for deprecated fields (a Pod's AppArmor annotations, gitRepo volumes), which are not
 *   policy decisions.
 * - The object (an allowed CREATE or UPDATE): the server's dry-run answer and celgate's patched
 *   object are compared at every path of celgate's patch. The rest of the object differs by what
 *   the API server does besides policies (a registry strategy's PrepareForCreate, serialised empty
 *   structs, a generated name), so a mutation the server made where celgate made none is not seen
 *   here: the suites' own `patch`/`patched` expectations cover those.
 */
import type { CaseActual } from "../../src/suite/run.ts";
import type { Answer } from "./decisions-client.ts";
import type { DecisionCase } from "./decisions-inputs.ts";

export type Aspect = "allowed" | "status" | "warnings" | "auditAnnotations" | "object";

export interface ServerDecision {
  readonly allowed: boolean;
  readonly status?: { readonly code: number; readonly reason: string; readonly message: string };
  readonly warnings: readonly string[];
  /** The stored object the answer carries (an allowed CREATE or UPDATE). */
  readonly object?: unknown;
}

export interface Difference {
  readonly case: string;
  readonly aspect: Aspect;
  readonly server: string;
  readonly celgate: string;
}

const VALIDATION_FAILURE = "validation.policy.admission.k8s.io/validation_failure";

interface StatusBody {
  readonly kind?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
}

/** The admission message inside the API server's wrapping of it. */
export function unwrapMessage(message: string): string {
  return message.replace(/^[a-z0-9.-]+(?: "[^"]*")? is forbidden: /, "");
}

function isAdmissionDenial(message: string): boolean {
  return /AdmissionPolicy '[^']*'/.test(message);
}

export function serverDecision(c: DecisionCase, answer: Answer): ServerDecision {
  const op = c.request.operation;
  const body = (typeof answer.body === "object" && answer.body !== null ? answer.body : {}) as StatusBody;
  const ok = answer.status >= 200 && answer.status < 300;
  const exists = op === "CREATE" && answer.status === 409 && body.reason === "AlreadyExists";
  const connected = op === "CONNECT" && !isAdmissionDenial(body.message ?? "");
  if (ok || exists || connected)
    return {
      allowed: true,
      warnings: answer.warnings,
      ...(ok && (op === "CREATE" || op === "UPDATE") && c.request.subResource === undefined
        ? { object: answer.body }
        : {}),
    };
  return {
    allowed: false,
    status: {
      code: body.code ?? answer.status,
      reason: body.reason ?? "",
      message: unwrapMessage(body.message ?? String(answer.body)),
    },
    warnings: answer.warnings,
  };
}

/** The value at a JSON Pointer (RFC 6901), or undefined when nothing is there. */
export function pointerValue(doc: unknown, pointer: string): unknown {
  let at: unknown = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/**
 * Where the server's object and celgate's patched one differ, at the fields celgate's mutations
 * touched (the paths of its patch): the server's other changes (its defaulting, what a registry
 * strategy sets on create, serialised empty structs) are not the policies'.
 */
export function touchedDifferences(serverObject: unknown, celgate: CaseActual): string[] {
  const out: string[] = [];
  for (const path of new Set(celgate.patch.map((op) => op.path))) {
    const s = pointerValue(serverObject, path);
    const c = pointerValue(celgate.patched, path);
    if (canonical(s) !== canonical(c))
      out.push(`${path}: server ${JSON.stringify(s)}, celgate ${JSON.stringify(c)}`);
  }
  return out;
}

/** JSON with every object's keys sorted: a map's key order means nothing (Go serialises maps sorted). */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    typeof x === "object" && x !== null && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/** A warning a policy gave (validationActions Warn): the API server's other warnings are its own. */
function isPolicyWarning(warning: string): boolean {
  return /AdmissionPolicy '[^']*'/.test(warning);
}

function show(status: ServerDecision["status"]): string {
  return status ? `${status.code} ${status.reason}: ${status.message}` : "(allowed)";
}

function sameMultiset(a: readonly string[], b: readonly string[]): boolean {
  return JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
}

/** The differences of allowed, status, warnings and object (audit annotations: compareAudit). */
export function compareDecisions(c: DecisionCase, server: ServerDecision): Difference[] {
  const celgate = c.actual;
  const base = { case: c.name };
  const out: Difference[] = [];
  if (server.allowed !== celgate.allowed)
    return [{ ...base, aspect: "allowed", server: show(server.status), celgate: show(celgate.status) }];
  if (!server.allowed && show(server.status) !== show(celgate.status))
    out.push({ ...base, aspect: "status", server: show(server.status), celgate: show(celgate.status) });
  const policyWarnings = server.warnings.filter(isPolicyWarning);
  if (!sameMultiset(policyWarnings, celgate.warnings))
    out.push({
      ...base,
      aspect: "warnings",
      server: JSON.stringify(policyWarnings),
      celgate: JSON.stringify(celgate.warnings),
    });
  if (server.object !== undefined) {
    const paths = touchedDifferences(server.object, celgate);
    if (paths.length > 0)
      out.push({ ...base, aspect: "object", server: paths.join("\n"), celgate: "(see server)" });
  }
  return out;
}

function auditValue(key: string, value: string): unknown {
  if (key !== VALIDATION_FAILURE) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** Differences of the audit annotations a policy can write (server: the event's `annotations`). */
export function compareAudit(
  c: DecisionCase,
  eventAnnotations: Readonly<Record<string, string>>,
  policyNames: readonly string[],
  celgate: CaseActual["auditAnnotations"],
): Difference[] {
  const ours = (k: string) => k === VALIDATION_FAILURE || policyNames.some((p) => k.startsWith(`${p}/`));
  const server = Object.fromEntries(Object.entries(eventAnnotations).filter(([k]) => ours(k)));
  const keys = [...new Set([...Object.keys(server), ...Object.keys(celgate)])].sort();
  const differing = keys.filter((k) => {
    const s = server[k];
    const g = celgate[k];
    return (
      s === undefined ||
      g === undefined ||
      JSON.stringify(auditValue(k, s)) !== JSON.stringify(auditValue(k, g))
    );
  });
  if (differing.length === 0) return [];
  const pick = (m: Readonly<Record<string, string>>) =>
    JSON.stringify(Object.fromEntries(differing.filter((k) => k in m).map((k) => [k, m[k]])));
  return [{ case: c.name, aspect: "auditAnnotations", server: pick(server), celgate: pick(celgate) }];
}
