/**
 * The REPL's `:policy`: policies loaded from a path and evaluated against the session's request as
 * `celgate eval` evaluates them, with the same lookups (Namespaces from the files and the one loaded
 * with `:namespace`, any other taken to exist; params stored as the cluster stores them).
 */
import type { CelExtras } from "../../cel/index.ts";
import { compilePolicySet } from "../../compile/policy.ts";
import { admit, OFFLINE_DEADLINE_MS } from "../../engine/admit.ts";
import { contextFromResources } from "../../engine/context.ts";
import { decide } from "../../engine/decision.ts";
import { resourceRef } from "../../engine/request.ts";
import type { AdmissionRequest } from "../../request/types.ts";
import { err, ok, type Result } from "../../result.ts";
import { loadPolicyPaths } from "../../sources/files.ts";
import { errorCount, formatDiagnostics, unboundNote } from "../output/diagnostics.ts";
import { withNameHints } from "../output/hints.ts";
import { type ResourceEvaluation, resourceEvaluation } from "../output/results.ts";

export interface PolicyRun {
  /** The policy files and the params file to load (absolute paths). */
  readonly policyPath: string;
  readonly paramsPath?: string;
  readonly request: AdmissionRequest;
  /** The Namespace loaded with `:namespace`, if any. */
  readonly namespaceObject?: Readonly<Record<string, unknown>>;
  readonly extras: CelExtras;
  /** The API server's defaults on stored objects and after mutations (the REPL's `--no-defaults` turns them off). */
  readonly defaults: boolean;
  /** The Kubernetes release to compile the policies for (`--kubernetes-version`). */
  readonly kubernetesVersion?: string;
  /** `:policy --include-unbound`: the policies no binding names too, as if bound with [Deny]. */
  readonly includeUnbound?: boolean;
}

/** The evaluation and the diagnostics text (warnings), or why nothing was evaluated. */
export async function evaluatePolicies(
  run: PolicyRun,
  shownPath: string,
): Promise<Result<{ readonly evaluation: ResourceEvaluation; readonly report: string }, string>> {
  const loaded = await loadPolicyPaths([run.policyPath]);
  const params = run.paramsPath ? await loadPolicyPaths([run.paramsPath]) : undefined;
  const resources = [...loaded.set.resources, ...(params?.set.resources ?? [])];
  const compiled = compilePolicySet(
    { ...loaded.set, resources },
    {
      extras: run.extras,
      ...(run.kubernetesVersion !== undefined ? { kubernetesVersion: run.kubernetesVersion } : {}),
    },
  );
  const diagnostics = [...loaded.diagnostics, ...compiled.diagnostics, ...(params?.diagnostics ?? [])];
  // With the hints `check` adds, so the REPL reports problems as check does.
  const notes = run.includeUnbound
    ? ""
    : unboundNote(
        compiled.unbound.map((p) => p.name),
        ":policy --include-unbound",
      );
  const report = `${formatDiagnostics(withNameHints(diagnostics, loaded.set.policies))}${notes}`.trimEnd();
  if (errorCount(diagnostics) > 0)
    return err(`${report}\nthe policy files have errors; nothing was evaluated`);
  if (compiled.policies.length === 0) return err(`no policies found in ${shownPath}`);
  const request = run.request;
  const ctx = contextFromResources(resources, {
    assumeNamespaces: true,
    defaults: run.defaults,
    ...(run.namespaceObject ? { namespaceObject: run.namespaceObject } : {}),
  });
  const ref = resourceRef(request.object ?? request.oldObject, "object");
  const shown = ref.ok
    ? { ...ref.value, namespace: ref.value.kind === "Namespace" ? "" : request.namespace }
    : { apiVersion: "", kind: request.kind.kind, namespace: request.namespace, name: request.name };
  const options = {
    deadline: performance.now() + OFFLINE_DEADLINE_MS,
    allBindings: true,
    includeUnbound: run.includeUnbound ?? false,
    explain: true,
    defaults: run.defaults,
  };
  const evaluation = resourceEvaluation(shown, request, decide(admit(compiled, request, ctx, options)));
  return ok({ evaluation, report });
}
