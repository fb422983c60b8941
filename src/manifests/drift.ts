/**
 * Drift between the webhook configurations a cluster has and the ones the policies need now. Both
 * sides go through the same reader and defaults (webhook-config.ts), so a field the API server
 * filled in (`matchPolicy: Equivalent`, `objectSelector: {}`, `scope: "*"`) is no difference, and
 * neither is what the API server and cert-manager add (uid, managedFields, an injected caBundle
 * when the wanted configuration names none). Lists whose order means nothing (rules, selector
 * requirements, matchConditions) are compared as sets.
 */
import { requirementsOf } from "./carry.ts";
import type { WebhookConfiguration, WebhookSpec } from "./webhook-config.ts";
import type { WebhookRule } from "./rules.ts";

export interface DriftReport {
  /** One line per difference: `Kind name: webhook W: field: live X, wanted Y`. */
  readonly differences: readonly string[];
  /** Live configurations that are not celgate's (other names), left alone. */
  readonly ignored: readonly string[];
}

function canonicalRule(r: WebhookRule): string {
  return JSON.stringify([
    [...r.operations].sort(),
    [...r.apiGroups].sort(),
    [...r.apiVersions].sort(),
    [...r.resources].sort(),
    r.scope,
  ]);
}

function show(v: unknown): string {
  return v === undefined ? "(none)" : JSON.stringify(v);
}

/** The fields of a webhook as compared, each in a form where equal means equivalent. */
function comparable(h: WebhookSpec, wanted: WebhookSpec | undefined): Record<string, unknown> {
  const selector = (s: WebhookSpec["namespaceSelector"]) =>
    requirementsOf(s)
      .map((r) => `${r.key} ${r.operator} ${r.values.join(",")}`.trim())
      .sort();
  const cc = h.clientConfig;
  return {
    "clientConfig.url": cc.url,
    "clientConfig.service": cc.service,
    // A caBundle the wanted configuration leaves to cert-manager's injection is not compared.
    ...(wanted === undefined || wanted.clientConfig.caBundle !== undefined
      ? { "clientConfig.caBundle": cc.caBundle }
      : {}),
    rules: h.rules.map(canonicalRule).sort(),
    failurePolicy: h.failurePolicy,
    matchPolicy: h.matchPolicy,
    namespaceSelector: selector(h.namespaceSelector),
    objectSelector: selector(h.objectSelector),
    matchConditions: h.matchConditions.map((c) => `${c.name}: ${c.expression.trim()}`).sort(),
    sideEffects: h.sideEffects,
    timeoutSeconds: h.timeoutSeconds,
    admissionReviewVersions: h.admissionReviewVersions,
    reinvocationPolicy: h.reinvocationPolicy,
  };
}

function displayRules(h: WebhookSpec): unknown {
  return h.rules.map((r) => ({
    operations: r.operations,
    apiGroups: r.apiGroups,
    apiVersions: r.apiVersions,
    resources: r.resources,
    scope: r.scope,
  }));
}

function compareWebhook(label: string, live: WebhookSpec, wanted: WebhookSpec, out: string[]): void {
  const a = comparable(live, wanted);
  const b = comparable(wanted, wanted);
  for (const key of Object.keys(b)) {
    if (JSON.stringify(a[key]) === JSON.stringify(b[key])) continue;
    if (key === "rules")
      out.push(`${label}: rules: live ${show(displayRules(live))}, wanted ${show(displayRules(wanted))}`);
    else out.push(`${label}: ${key}: live ${show(a[key])}, wanted ${show(b[key])}`);
  }
}

/** Compares each wanted configuration with the live one of the same kind and name. */
export function compareWebhookConfigurations(
  wanted: readonly WebhookConfiguration[],
  live: readonly WebhookConfiguration[],
): DriftReport {
  const differences: string[] = [];
  const key = (c: WebhookConfiguration) => `${c.kind}/${c.name}`;
  const wantedKeys = new Set(wanted.map(key));
  const ignored = live.filter((c) => !wantedKeys.has(key(c))).map((c) => `${c.kind} ${c.name}`);
  for (const w of wanted) {
    const l = live.find((c) => key(c) === key(w));
    const label = `${w.kind} ${w.name}`;
    if (!l) {
      differences.push(`${label}: missing from the live configurations`);
      continue;
    }
    for (const [k, v] of Object.entries(w.annotations))
      if (l.annotations[k] !== v)
        differences.push(
          `${label}: metadata.annotations[${k}]: live ${show(l.annotations[k])}, wanted ${show(v)}`,
        );
    for (const [k, v] of Object.entries(w.labels))
      if (l.labels[k] !== v)
        differences.push(`${label}: metadata.labels[${k}]: live ${show(l.labels[k])}, wanted ${show(v)}`);
    for (const h of w.webhooks) {
      const lh = l.webhooks.find((x) => x.name === h.name);
      if (!lh) differences.push(`${label}: webhook ${h.name}: missing from the live configuration`);
      else compareWebhook(`${label}: webhook ${h.name}`, lh, h, differences);
    }
    for (const lh of l.webhooks)
      if (!w.webhooks.some((x) => x.name === lh.name))
        differences.push(`${label}: webhook ${lh.name}: not needed by the policies now (remove it)`);
  }
  // A live celgate configuration that the policies no longer need at all (no mutating policies
  // left, say) has the same name as a wanted one of the other kind.
  const names = new Set(wanted.map((w) => w.name));
  for (const l of live)
    if (names.has(l.name) && !wantedKeys.has(key(l)))
      differences.push(`${l.kind} ${l.name}: not needed by the policies now (delete it)`);
  return {
    differences,
    ignored: ignored.filter((i) => ![...names].some((n) => i.endsWith(` ${n}`))),
  };
}
