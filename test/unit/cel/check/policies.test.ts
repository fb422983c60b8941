/**
 * What the API server accepts must check clean: every expression of the bundled policies
 * (policies/*.yaml) and of the Kubernetes documentation examples (test/fixtures/engine, run by
 * test/unit/engine/docs-examples.test.ts), each in its policy's environment: params declared only
 * with a paramKind, variables typed in order, Object and JSONPatch for mutations; and each must have
 * the type its field requires (result-types.ts).
 *
 * The few the checker refuses are listed with the rule that refuses them: they are faults of the
 * policies (the API server would refuse them too), reported rather than hidden. A policy that is
 * fixed must leave the list.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  type AdmissionCheckOptions,
  admissionCheckEnv,
  type CelType,
  type ExpressionKind,
  resultTypeIssue,
} from "../../../../src/cel/check/index.ts";
import type { ParsedPolicy } from "../../../../src/policy/types.ts";
import { parsePolicyText } from "../../../../src/policy/parse.ts";
import { check } from "./helpers.ts";

const ROOT = new URL("../../../../", import.meta.url).pathname;

function files(dir: string, keep: (f: string) => boolean): string[] {
  return readdirSync(join(ROOT, dir))
    .filter(keep)
    .sort()
    .map((f) => join(dir, f));
}

const POLICY_FILES = files("policies", (f) => f.endsWith(".yaml") && !f.endsWith(".test.yaml"));
const DOCS_FILES = files("test/fixtures/engine", (f) => f.endsWith(".yaml"));

interface Expression {
  readonly where: string;
  readonly source: string;
  readonly kind: ExpressionKind;
}

/** Each expression of a policy with its diagnostics, variables first (each visible to the later ones). */
function checkPolicy(file: string, p: ParsedPolicy): { where: string; messages: string[] }[] {
  const out: { where: string; messages: string[] }[] = [];
  const variables: [string, CelType | undefined][] = [];
  const base: AdmissionCheckOptions = {
    ...(p.paramKind ? {} : { params: null }),
    mutation: p.kind === "MutatingAdmissionPolicy",
  };
  const run = (e: Expression): CelType | undefined => {
    const { result } = check(e.source, admissionCheckEnv({ ...base, variables: [...variables] }));
    const messages = result.diagnostics.map((d) => d.message);
    const wrongType = messages.length === 0 ? resultTypeIssue(e.kind, result.type) : undefined;
    if (wrongType !== undefined) messages.push(wrongType);
    out.push({ where: `${file} ${p.name} ${e.where}`, messages });
    return messages.length === 0 ? result.type : undefined;
  };
  p.variables.forEach((v) => {
    variables.push([v.name, run({ where: `variables.${v.name}`, source: v.expression, kind: "variable" })]);
  });
  for (const m of p.matchConditions)
    run({ where: `matchConditions.${m.name}`, source: m.expression, kind: "matchCondition" });
  if (p.kind === "ValidatingAdmissionPolicy") {
    p.validations.forEach((v, i) => {
      run({ where: `validations[${i}].expression`, source: v.expression, kind: "validation" });
      if (v.messageExpression)
        run({
          where: `validations[${i}].messageExpression`,
          source: v.messageExpression,
          kind: "messageExpression",
        });
    });
    for (const a of p.auditAnnotations)
      run({ where: `auditAnnotations.${a.key}`, source: a.valueExpression, kind: "auditAnnotation" });
  } else {
    p.mutations.forEach((m, i) => {
      if (m.applyConfiguration)
        run({
          where: `mutations[${i}]`,
          source: m.applyConfiguration.expression,
          kind: "applyConfiguration",
        });
      if (m.jsonPatch) run({ where: `mutations[${i}]`, source: m.jsonPatch.expression, kind: "jsonPatch" });
    });
  }
  return out;
}

function checkFiles(list: readonly string[]): Map<string, string[]> {
  const results = new Map<string, string[]>();
  for (const file of list) {
    const { set } = parsePolicyText(readFileSync(join(ROOT, file), "utf8"), file);
    for (const p of set.policies) for (const r of checkPolicy(file, p)) results.set(r.where, r.messages);
  }
  return results;
}

/**
 * Expressions the API server would refuse, with cel-go's messages. Each is a fault of the policy:
 * cel-go's `_?_:_(bool, A, A)` cannot bind A to both string and null (checker/types.go: only
 * messages, optionals, durations and timestamps take null). The bundled policies' map literals that
 * mixed a string with a dyn value (the homogeneous aggregate literal rule, cel/validator.go) were
 * fixed with `'path': dyn(...)` and left this list.
 */
const KNOWN_REJECTED: ReadonlyMap<string, readonly string[]> = new Map([
  [
    "test/fixtures/engine/vap-audit-annotations.yaml demo-policy.example.com auditAnnotations.high-replica-count",
    ["found no matching overload for '_?_:_' applied to '(bool, string, null)'"],
  ],
]);

for (const [name, list] of [
  ["policies/*.yaml", POLICY_FILES],
  ["the Kubernetes documentation examples", DOCS_FILES],
] as const) {
  test(`every expression of ${name} checks clean, but for the listed faults`, () => {
    const results = checkFiles(list);
    assert.ok(results.size > (list === POLICY_FILES ? 100 : 10), "the expressions were found");
    const refused = [...results].filter(([, m]) => m.length > 0);
    const expected = [...KNOWN_REJECTED].filter(([where]) => list.some((f) => where.startsWith(`${f} `)));
    assert.deepEqual(refused, expected);
  });
}
