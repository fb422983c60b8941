/**
 * The checker against cel-spec's conformance suites (as @bufbuild/cel-spec packages them): every
 * test that cel-spec runs with type-checking on must check without errors, and where it states
 * the deduced type (`typed_result`), the checker must deduce that type.
 *
 * Left out, as in the evaluator's conformance test: protobuf messages, enums and containers, and
 * tests that declare functions. Tests with `disable_check` are not meant to type-check.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { tests as conformance } from "@bufbuild/cel-spec/testdata/conformance.js";
import type { SerializedIncrementalTest } from "@bufbuild/cel-spec/testdata/tests.js";
import { type CelType, celTypes, createCheckEnv, formatType } from "../../../../src/cel/check/index.ts";
import {
  collectSpecTests,
  type Json,
  type JsonObject,
  obj,
  specSkipReason,
} from "../../../helpers/cel-spec.ts";
import { check } from "./helpers.ts";

const {
  BOOL,
  BYTES,
  DOUBLE,
  DURATION,
  DYN,
  INT,
  NULL,
  STRING,
  TIMESTAMP,
  TYPE,
  UINT,
  ANY,
  listOf,
  mapOf,
  objectType,
  opaque,
  typeOf,
  typeParam,
  wrapperOf,
} = celTypes;

class Unsupported extends Error {}

const PRIMITIVES: Record<string, CelType> = {
  BOOL,
  BYTES,
  DOUBLE,
  INT64: INT,
  STRING,
  UINT64: UINT,
};

/** A cel.expr.Type in proto JSON as a checker type; protobuf messages other than well-known ones are unsupported. */
function specType(json: Json | undefined): CelType {
  const t = obj(json);
  const [kind] = Object.keys(t);
  const v = kind === undefined ? undefined : t[kind];
  switch (kind) {
    case "primitive":
      return PRIMITIVES[v as string] ?? DYN;
    case "wrapper":
      return wrapperOf(PRIMITIVES[v as string] ?? DYN);
    case "dyn":
      return DYN;
    case "null":
      return NULL;
    case "wellKnown":
      return v === "TIMESTAMP" ? TIMESTAMP : v === "DURATION" ? DURATION : ANY;
    case "listType":
      return listOf(specType(obj(v).elemType));
    case "mapType":
      return mapOf(specType(obj(v).keyType), specType(obj(v).valueType));
    case "typeParam":
      return typeParam(v as string);
    case "abstractType": {
      const a = obj(v);
      return opaque(a.name as string, ...((a.parameterTypes ?? []) as Json[]).map(specType));
    }
    case "type":
      return v === null || (typeof v === "object" && Object.keys(v as object).length === 0)
        ? TYPE
        : typeOf(specType(v));
    case "messageType": {
      const named = objectType(v as string);
      if (named.kind === "struct") throw new Unsupported(`message type ${v as string}`);
      return named;
    }
    default:
      throw new Unsupported(`type kind ${String(kind)}`);
  }
}

/** The test's variables, or why it cannot run here. */
function variables(t: SerializedIncrementalTest): [string, CelType][] {
  const o = t.original as unknown as JsonObject;
  const out: [string, CelType][] = [];
  for (const d of (o.typeEnv ?? []) as readonly Json[]) {
    const decl = obj(d);
    if (decl.function !== undefined) throw new Unsupported("declares functions");
    out.push([decl.name as string, specType(obj(decl.ident).type)]);
  }
  return out;
}

function skipReason(t: SerializedIncrementalTest): string | undefined {
  const o = t.original as unknown as JsonObject;
  if (o.disableCheck === true) return "not type-checked by cel-spec";
  // The evaluator's reasons, except that check-only tests are exactly what this test wants.
  const reason = specSkipReason({
    ...t,
    original: { ...t.original, checkOnly: false },
  } as SerializedIncrementalTest);
  return reason === "declares protobuf types" ? undefined : reason;
}

/** cel-spec tests this checker does not pass, each with why. */
const KNOWN: ReadonlyMap<string, string> = new Map([
  [
    "fields/quoted_map_fields/field_access_slash",
    "backquoted field names are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/field_access_dash",
    "backquoted field names are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/field_access_dot",
    "backquoted field names are not parsed by @bufbuild/cel 0.6.1",
  ],
  [
    "fields/quoted_map_fields/has_field_slash",
    "backquoted field names are not parsed by @bufbuild/cel 0.6.1",
  ],
  ["fields/quoted_map_fields/has_field_dash", "backquoted field names are not parsed by @bufbuild/cel 0.6.1"],
  ["fields/quoted_map_fields/has_field_dot", "backquoted field names are not parsed by @bufbuild/cel 0.6.1"],
  ["parse/comments/new_line_terminated", "@bufbuild/cel 0.6.1's parser rejects this comment form"],
  [
    "type_deductions/legacy_nullable_types/null_assignable_to_abstract_parameter_candidate",
    "cel-go fails it too and skips it (conformance/BUILD.bazel): its joinTypes makes [optional.of(1), null] a list(null); we follow cel-go",
  ],
]);

const SUITES = [
  "basic",
  "bindings_ext",
  "comparisons",
  "conversions",
  "encoders_ext",
  "fields",
  "fp_math",
  "integer_math",
  "lists",
  "logic",
  "macros",
  "macros2",
  "math_ext",
  "optionals",
  "parse",
  "plumbing",
  "string",
  "string_ext",
  "timestamps",
  "type_deductions",
];

for (const name of SUITES) {
  const suite = conformance.suites?.find((s) => s.name === name);
  test(`cel-spec conformance, type-checked: ${name}`, async (t) => {
    assert.ok(suite, `suite ${name} is in the conformance data`);
    let checked = 0;
    for (const { path, t: c } of collectSpecTests(suite, name, [])) {
      let reason = skipReason(c);
      let vars: [string, CelType][] = [];
      if (reason === undefined) {
        try {
          vars = variables(c);
        } catch (e) {
          if (!(e instanceof Unsupported)) throw e;
          reason = e.message;
        }
      }
      if (reason !== undefined) continue;
      const known = KNOWN.get(path);
      await t.test(path, known === undefined ? {} : { todo: known }, () => {
        const env = createCheckEnv({
          variables: vars,
          extras: { bind: true, math: true, base64: true },
          withLibraries: ["strings.v3"],
          validators: [],
        });
        const { result } = check(c.original.expr, env);
        assert.deepEqual(
          result.diagnostics.map((d) => d.message),
          [],
          c.original.expr,
        );
        const typed = (c.original as unknown as JsonObject).typedResult;
        if (typed !== undefined) {
          const deduced = obj(typed).deducedType;
          if (deduced !== undefined)
            assert.equal(formatType(result.type), formatType(specType(deduced)), c.original.expr);
        }
      });
      checked++;
    }
    assert.ok(checked > 0, `${name}: some tests run`);
  });
}
