/**
 * Reading admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration and
 * MutatingWebhookConfiguration objects (as `kubectl get -o yaml` prints them, or as files for the API
 * server's static manifests), validated as the API server validates them
 * (pkg/apis/admissionregistration/validation: ValidateValidatingWebhookConfiguration) and defaulted
 * as v1 defaults them (admissionregistration/v1/defaults.go: failurePolicy Fail, matchPolicy
 * Equivalent, empty selectors, timeoutSeconds 10, reinvocationPolicy Never, scope `*`, port 443).
 *
 * Strict reading (a static manifest, decoded with the API server's strict decoder) makes a field the
 * type does not have an error; lenient reading (a cluster dump) lets it pass.
 */
import type { Diagnostic, DiagnosticCode, SourceLocation } from "../errors.ts";
import { compileLabelSelector } from "../match/index.ts";
import { dns1123Subdomain, qualifiedName } from "../policy/fields.ts";
import { METADATA_FIELDS } from "../policy/metadata.ts";
import type {
  FailurePolicy,
  LabelSelector,
  LabelSelectorRequirement,
  MatchCondition,
  MatchPolicyType,
  ReinvocationPolicy,
  RuleOperation,
  ScopeType,
} from "../policy/types.ts";
import { MAX_WEBHOOK_MATCH_CONDITIONS, webhookConditionProblems } from "./carry.ts";
import type { WebhookRule } from "./rules.ts";

export const WEBHOOK_KINDS = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];
export const WEBHOOK_API_VERSION = "admissionregistration.k8s.io/v1";
/** What Kubernetes sets when timeoutSeconds is left out (v1). */
export const KUBERNETES_DEFAULT_TIMEOUT_SECONDS = 10;

export interface ServiceReference {
  readonly namespace: string;
  readonly name: string;
  readonly path?: string;
  readonly port: number;
}

export interface WebhookClientConfig {
  readonly url?: string;
  readonly service?: ServiceReference;
  readonly caBundle?: string;
}

export interface WebhookSpec {
  readonly name: string;
  readonly clientConfig: WebhookClientConfig;
  readonly rules: readonly WebhookRule[];
  readonly failurePolicy: FailurePolicy;
  readonly matchPolicy: MatchPolicyType;
  readonly namespaceSelector: LabelSelector;
  readonly objectSelector: LabelSelector;
  readonly sideEffects: string;
  readonly timeoutSeconds: number;
  readonly admissionReviewVersions: readonly string[];
  readonly matchConditions: readonly MatchCondition[];
  /** Mutating webhooks only. */
  readonly reinvocationPolicy?: ReinvocationPolicy;
}

export interface WebhookConfiguration {
  readonly kind: WebhookKind;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly webhooks: readonly WebhookSpec[];
  /** Where a field of this object was written (a field path such as `webhooks[0].timeoutSeconds`). */
  locate(path: string): SourceLocation;
}

/** A field list per structure, for strict decoding. */
const TOP_FIELDS = ["apiVersion", "kind", "metadata", "webhooks"];
const WEBHOOK_FIELDS = [
  "name",
  "clientConfig",
  "rules",
  "failurePolicy",
  "matchPolicy",
  "namespaceSelector",
  "objectSelector",
  "sideEffects",
  "timeoutSeconds",
  "admissionReviewVersions",
  "matchConditions",
];
const CLIENT_CONFIG_FIELDS = ["url", "service", "caBundle"];
const SERVICE_FIELDS = ["namespace", "name", "path", "port"];
const RULE_FIELDS = ["operations", "apiGroups", "apiVersions", "resources", "scope"];
const SELECTOR_FIELDS = ["matchLabels", "matchExpressions"];
const REQUIREMENT_FIELDS = ["key", "operator", "values"];
const CONDITION_FIELDS = ["name", "expression"];

const OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];
const SIDE_EFFECTS_V1 = ["None", "NoneOnDryRun"];
const REVIEW_VERSIONS = ["v1", "v1beta1"];

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads one object; collects every problem rather than stopping at the first. */
class Reader {
  readonly diagnostics: Diagnostic[] = [];
  constructor(
    readonly locateAt: (path: string) => SourceLocation,
    private readonly strict: boolean,
    private readonly object: { kind: string; name: string },
  ) {}

  report(code: DiagnosticCode, path: string, message: string, severity: "error" | "warning" = "error"): void {
    this.diagnostics.push({
      code,
      severity,
      message,
      ...(path ? { path } : {}),
      location: this.locateAt(path),
      object: this.object,
    });
  }

  child(path: string, key: string | number): string {
    if (typeof key === "number") return `${path}[${key}]`;
    return path ? `${path}.${key}` : key;
  }

  /** Unknown fields: errors when decoding strictly (the API server's strict decoder), else ignored. */
  known(value: Json, path: string, fields: readonly string[]): void {
    if (!this.strict) return;
    for (const key of Object.keys(value))
      if (!fields.includes(key))
        this.report("PE_FIELD_VALUE", this.child(path, key), `unknown field "${key}" (strict decoding)`);
  }

  object_(value: unknown, path: string): Json | undefined {
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) {
      this.report("PE_FIELD_TYPE", path, "expected a mapping");
      return undefined;
    }
    return value;
  }

  string(value: Json, key: string, path: string): string | undefined {
    const v = value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") {
      this.report("PE_FIELD_TYPE", this.child(path, key), "expected a string");
      return undefined;
    }
    return v;
  }

  requiredString(value: Json, key: string, path: string): string | undefined {
    const s = this.string(value, key, path);
    if (s === undefined || s === "")
      this.report("PE_MISSING_FIELD", this.child(path, key), `missing required field "${key}"`);
    return s === "" ? undefined : s;
  }

  oneOf<T extends string>(value: Json, key: string, path: string, allowed: readonly T[], fallback: T): T {
    const s = this.string(value, key, path);
    if (s === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(s)) {
      this.report(
        "PE_FIELD_VALUE",
        this.child(path, key),
        `must be one of ${allowed.join(", ")}, got "${s}"`,
      );
      return fallback;
    }
    return s as T;
  }

  stringList(value: Json, key: string, path: string): string[] {
    const v = value[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
      this.report("PE_FIELD_TYPE", this.child(path, key), "expected a list of strings");
      return [];
    }
    return v as string[];
  }

  stringMap(value: Json, key: string, path: string): Record<string, string> {
    const v = value[key];
    if (v === undefined || v === null) return {};
    if (!isObject(v) || Object.values(v).some((x) => typeof x !== "string")) {
      this.report("PE_FIELD_TYPE", this.child(path, key), "expected a mapping of strings to strings");
      return {};
    }
    return v as Record<string, string>;
  }

  list(value: Json, key: string, path: string): unknown[] {
    const v = value[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.report("PE_FIELD_TYPE", this.child(path, key), "expected a list");
      return [];
    }
    return v;
  }

  integer(value: Json, key: string, path: string): number | undefined {
    const v = value[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v)) {
      this.report("PE_FIELD_TYPE", this.child(path, key), "expected an integer");
      return undefined;
    }
    return v;
  }
}

function readSelector(r: Reader, value: Json, key: string, path: string): LabelSelector {
  const p = r.child(path, key);
  const o = r.object_(value[key], p);
  if (!o) return { matchLabels: {}, matchExpressions: [] };
  r.known(o, p, SELECTOR_FIELDS);
  const matchExpressions: LabelSelectorRequirement[] = [];
  r.list(o, "matchExpressions", p).forEach((item, i) => {
    const ip = r.child(r.child(p, "matchExpressions"), i);
    const req = r.object_(item, ip);
    if (!req) return;
    r.known(req, ip, REQUIREMENT_FIELDS);
    const operator = r.oneOf(req, "operator", ip, ["In", "NotIn", "Exists", "DoesNotExist"] as const, "In");
    matchExpressions.push({
      key: r.requiredString(req, "key", ip) ?? "",
      operator,
      values: r.stringList(req, "values", ip),
    });
  });
  const selector = { matchLabels: r.stringMap(o, "matchLabels", p), matchExpressions };
  const compiled = compileLabelSelector(selector);
  if (!compiled.ok) r.report("PE_FIELD_VALUE", p, compiled.error.message);
  return selector;
}

function readRule(r: Reader, item: unknown, path: string): WebhookRule | undefined {
  const o = r.object_(item, path);
  if (!o) return undefined;
  r.known(o, path, RULE_FIELDS);
  const operations = r.stringList(o, "operations", path);
  for (const op of operations)
    if (!OPERATIONS.includes(op))
      r.report("PE_FIELD_VALUE", r.child(path, "operations"), `unknown operation "${op}"`);
  for (const field of ["operations", "apiGroups", "apiVersions", "resources"] as const) {
    const list = r.stringList(o, field, path);
    if (list.length === 0) r.report("PE_MISSING_FIELD", r.child(path, field), `${field} must not be empty`);
    if (list.includes("*") && list.length > 1 && field !== "resources")
      r.report("PE_FIELD_VALUE", r.child(path, field), `if '*' is present, it must be the only item`);
  }
  return {
    operations: operations as RuleOperation[],
    apiGroups: r.stringList(o, "apiGroups", path),
    apiVersions: r.stringList(o, "apiVersions", path),
    resources: r.stringList(o, "resources", path),
    scope: r.oneOf(o, "scope", path, ["Cluster", "Namespaced", "*"] as const, "*" as ScopeType),
  };
}

function readClientConfig(r: Reader, value: Json, path: string): WebhookClientConfig {
  const p = r.child(path, "clientConfig");
  const o = r.object_(value.clientConfig, p);
  if (!o) {
    r.report("PE_MISSING_FIELD", p, 'missing required field "clientConfig"');
    return {};
  }
  r.known(o, p, CLIENT_CONFIG_FIELDS);
  const url = r.string(o, "url", p);
  const caBundle = r.string(o, "caBundle", p);
  const sp = r.child(p, "service");
  const so = r.object_(o.service, sp);
  let service: ServiceReference | undefined;
  if (so) {
    r.known(so, sp, SERVICE_FIELDS);
    const svcPath = r.string(so, "path", sp);
    if (svcPath !== undefined && !svcPath.startsWith("/"))
      r.report("PE_FIELD_VALUE", r.child(sp, "path"), "must start with '/'");
    const port = r.integer(so, "port", sp) ?? 443;
    if (port < 1 || port > 65535)
      r.report("PE_FIELD_VALUE", r.child(sp, "port"), "must be a port number from 1 to 65535");
    service = {
      namespace: r.requiredString(so, "namespace", sp) ?? "",
      name: r.requiredString(so, "name", sp) ?? "",
      ...(svcPath !== undefined ? { path: svcPath } : {}),
      port,
    };
  }
  if ((url === undefined) === (service === undefined))
    r.report("PE_FIELD_VALUE", p, "exactly one of url or service is required");
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      r.report("PE_FIELD_VALUE", r.child(p, "url"), `not a URL: "${url}"`);
    }
    if (parsed) {
      if (parsed.protocol !== "https:")
        r.report("PE_FIELD_VALUE", r.child(p, "url"), "'https' is the only allowed URL scheme");
      if (parsed.username || parsed.password)
        r.report("PE_FIELD_VALUE", r.child(p, "url"), "user information is not permitted in the URL");
      if (parsed.hash || url.includes("#"))
        r.report("PE_FIELD_VALUE", r.child(p, "url"), "fragments are not permitted in the URL");
      if (parsed.search || url.includes("?"))
        r.report("PE_FIELD_VALUE", r.child(p, "url"), "query parameters are not permitted in the URL");
    }
  }
  return {
    ...(url !== undefined ? { url } : {}),
    ...(service ? { service } : {}),
    ...(caBundle !== undefined ? { caBundle } : {}),
  };
}

function readMatchConditions(r: Reader, value: Json, path: string): MatchCondition[] {
  const p = r.child(path, "matchConditions");
  const items = r.list(value, "matchConditions", path);
  if (items.length > MAX_WEBHOOK_MATCH_CONDITIONS)
    r.report(
      "PE_FIELD_VALUE",
      p,
      `at most ${MAX_WEBHOOK_MATCH_CONDITIONS} matchConditions, got ${items.length}`,
    );
  const out: MatchCondition[] = [];
  const names = new Set<string>();
  items.forEach((item, i) => {
    const ip = r.child(p, i);
    const o = r.object_(item, ip);
    if (!o) return;
    r.known(o, ip, CONDITION_FIELDS);
    const name = r.requiredString(o, "name", ip);
    const expression = r.requiredString(o, "expression", ip);
    if (name !== undefined) {
      for (const m of qualifiedName(name)) r.report("PE_FIELD_VALUE", r.child(ip, "name"), m);
      if (names.has(name))
        r.report("PE_DUPLICATE", r.child(ip, "name"), `matchCondition "${name}" is named twice`);
      names.add(name);
    }
    if (expression !== undefined) {
      const problem = webhookConditionProblems(expression)[0];
      if (problem)
        r.diagnostics.push({
          code: problem.code,
          severity: "error",
          message: problem.message,
          path: r.child(ip, "expression"),
          location: r.locateAt(r.child(ip, "expression")),
          detail: problem.rendered,
        });
      out.push({ name: name ?? "", expression });
    }
  });
  return out;
}

function readWebhook(r: Reader, item: unknown, path: string, mutating: boolean): WebhookSpec | undefined {
  const o = r.object_(item, path);
  if (!o) return undefined;
  r.known(o, path, mutating ? [...WEBHOOK_FIELDS, "reinvocationPolicy"] : WEBHOOK_FIELDS);
  const name = r.requiredString(o, "name", path) ?? "";
  if (name && (name.split(".").length < 3 || dns1123Subdomain(name).length > 0))
    r.report(
      "PE_FIELD_VALUE",
      r.child(path, "name"),
      "should be a domain with at least three segments separated by dots",
    );
  const versions = r.stringList(o, "admissionReviewVersions", path);
  if (versions.length === 0)
    r.report("PE_MISSING_FIELD", r.child(path, "admissionReviewVersions"), "must specify one of v1, v1beta1");
  else if (!versions.some((v) => REVIEW_VERSIONS.includes(v)))
    r.report(
      "PE_FIELD_VALUE",
      r.child(path, "admissionReviewVersions"),
      "must include at least one of v1, v1beta1",
    );
  const sideEffects = r.requiredString(o, "sideEffects", path) ?? "";
  if (sideEffects && !SIDE_EFFECTS_V1.includes(sideEffects))
    r.report(
      "PE_FIELD_VALUE",
      r.child(path, "sideEffects"),
      `must be one of ${SIDE_EFFECTS_V1.join(", ")}, got "${sideEffects}"`,
    );
  const timeoutSeconds = r.integer(o, "timeoutSeconds", path) ?? KUBERNETES_DEFAULT_TIMEOUT_SECONDS;
  if (timeoutSeconds < 1 || timeoutSeconds > 30)
    r.report(
      "PE_FIELD_VALUE",
      r.child(path, "timeoutSeconds"),
      "the timeout value must be between 1 and 30 seconds",
    );
  const rules: WebhookRule[] = [];
  r.list(o, "rules", path).forEach((item, i) => {
    const rule = readRule(r, item, r.child(r.child(path, "rules"), i));
    if (rule) rules.push(rule);
  });
  return {
    name,
    clientConfig: readClientConfig(r, o, path),
    rules,
    failurePolicy: r.oneOf(o, "failurePolicy", path, ["Fail", "Ignore"] as const, "Fail"),
    matchPolicy: r.oneOf(o, "matchPolicy", path, ["Exact", "Equivalent"] as const, "Equivalent"),
    namespaceSelector: readSelector(r, o, "namespaceSelector", path),
    objectSelector: readSelector(r, o, "objectSelector", path),
    sideEffects,
    timeoutSeconds,
    admissionReviewVersions: versions,
    matchConditions: readMatchConditions(r, o, path),
    ...(mutating
      ? {
          reinvocationPolicy: r.oneOf(o, "reinvocationPolicy", path, ["Never", "IfNeeded"] as const, "Never"),
        }
      : {}),
  };
}

export interface ReadOptions {
  /** Unknown fields are errors (static manifests); otherwise they are ignored. */
  readonly strict: boolean;
  readonly locate: (path: string) => SourceLocation;
}

/** Whether an object is a webhook configuration (of any version). */
export function isWebhookConfiguration(value: unknown): boolean {
  return (
    isObject(value) &&
    typeof value.apiVersion === "string" &&
    value.apiVersion.startsWith("admissionregistration.k8s.io/") &&
    (WEBHOOK_KINDS as readonly unknown[]).includes(value.kind)
  );
}

/**
 * Reads one webhook configuration object (a mapping already decoded from YAML or JSON). Returns the
 * configuration, defaulted, when it has no error. Never throws.
 */
export function readWebhookConfiguration(
  value: unknown,
  options: ReadOptions,
): { readonly config?: WebhookConfiguration; readonly diagnostics: readonly Diagnostic[] } {
  const top = isObject(value) ? value : {};
  const kind = String(top.kind ?? "");
  const metadata = isObject(top.metadata) ? top.metadata : {};
  const r = new Reader(options.locate, options.strict, { kind, name: String(metadata.name ?? "") });
  if (top.apiVersion !== WEBHOOK_API_VERSION) {
    r.report(
      "PE_UNKNOWN_KIND",
      "apiVersion",
      `${kind} is read from ${WEBHOOK_API_VERSION}; got "${String(top.apiVersion)}"`,
    );
    return { diagnostics: r.diagnostics };
  }
  r.known(top, "", TOP_FIELDS);
  r.known(metadata, "metadata", METADATA_FIELDS);
  const name = r.requiredString(metadata, "name", "metadata") ?? "";
  if (name) for (const m of dns1123Subdomain(name)) r.report("PE_FIELD_VALUE", "metadata.name", m);
  const mutating = kind === "MutatingWebhookConfiguration";
  const webhooks: WebhookSpec[] = [];
  const names = new Set<string>();
  r.list(top, "webhooks", "").forEach((item, i) => {
    const path = `webhooks[${i}]`;
    const hook = readWebhook(r, item, path, mutating);
    if (!hook) return;
    if (hook.name && names.has(hook.name))
      r.report(
        "PE_DUPLICATE",
        `${path}.name`,
        `webhook name "${hook.name}" is used twice in this configuration`,
      );
    names.add(hook.name);
    webhooks.push(hook);
  });
  const failed = r.diagnostics.some((d) => d.severity === "error");
  if (failed) return { diagnostics: r.diagnostics };
  return {
    config: {
      kind: kind as WebhookKind,
      name,
      labels: r.stringMap(metadata, "labels", "metadata"),
      annotations: r.stringMap(metadata, "annotations", "metadata"),
      webhooks,
      locate: options.locate,
    },
    diagnostics: r.diagnostics,
  };
}
