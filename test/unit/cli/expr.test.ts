import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";

let dir = "";
const path = (name: string) => join(dir, name);

before(async () => {
  dir = await tempTree({
    "deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 7\n",
    "old.json": '{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 3}}',
    "params.yaml": "maxReplicas: 5\nbig: 9223372036854775807\n",
    "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n  labels: {env: prod}\n",
    "review.json": JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        operation: "UPDATE",
        object: { spec: { replicas: 2 } },
        oldObject: { spec: { replicas: 1 } },
      },
    }),
    "two.yaml": "a: 1\n---\nb: 2\n",
    "broken.yaml": "a: [1, 2\n",
  });
});
after(() => removeTree(dir));

test("text output: the value as JSON and its CEL type", async () => {
  const cases: [string, string][] = [
    ["1 + 2", "3 (int)"],
    ["'a' + 'b'", '"ab" (string)'],
    ["2.5 * 2.0", "5 (double)"],
    ["1u + 2u", "3 (uint)"],
    ["true && !false", "true (bool)"],
    ["null", "null (null_type)"],
    ["b'hi'", '"aGk=" (bytes)'],
    ["duration('1h')", '"3600s" (google.protobuf.Duration)'],
    ["timestamp('2024-05-01T10:00:00Z')", '"2024-05-01T10:00:00Z" (google.protobuf.Timestamp)'],
    ["9223372036854775807", '"9223372036854775807" (int)'],
    ["[1, 2]", "[\n  1,\n  2\n] (list)"],
    ["{'a': [true]}", '{\n  "a": [\n    true\n  ]\n} (map)'],
    ["optional.of(1)", '{\n  "optional": true,\n  "value": 1\n} (optional_type)'],
  ];
  for (const [expr, expected] of cases) {
    const r = await cli(["expr", expr]);
    assert.equal(r.stderr, "", expr);
    assert.equal(r.code, 0, expr);
    assert.equal(r.stdout, `${expected}\n`, expr);
  }
});

test("-o json: {value, type} with toJson rendering", async () => {
  const cases: [string, unknown][] = [
    ["1 + 2", { value: 3, type: "int" }],
    // Elements of one type: Kubernetes' homogeneous literal validator refuses [1, 'a', 2.5].
    ["[dyn(1), dyn('a'), dyn(2.5)]", { value: [1, "a", 2.5], type: "list" }],
    ["duration('90m')", { value: "5400s", type: "google.protobuf.Duration" }],
    ["-9223372036854775808", { value: "-9223372036854775808", type: "int" }],
    ["optional.none()", { value: { optional: true }, type: "optional_type" }],
  ];
  for (const [expr, expected] of cases) {
    // `--` so that an expression starting with '-' is not read as an option.
    const r = await cli(["expr", "-o", "json", "--", expr]);
    assert.equal(r.code, 0, expr);
    assert.deepEqual(JSON.parse(r.stdout), expected, expr);
  }
});

test("compile errors: cel-go's caret rendering on stderr, exit 1", async () => {
  const r = await cli(["expr", "object.spec.replicas <= nope"]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    "ERROR: <input>:1:25: undeclared reference to 'nope' (in container '')\n | object.spec.replicas <= nope\n | ........................^\n",
  );
});

test("compile errors: every problem is reported", async () => {
  const r = await cli(["expr", "a + b"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /ERROR: <input>:1:1: undeclared reference to 'a'/);
  assert.match(r.stderr, /ERROR: <input>:1:5: undeclared reference to 'b'/);
});

test("evaluation errors: message with a caret at the failing call, exit 1", async () => {
  const r = await cli(["expr", "1 / 0"]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  // The column is the parser's position for the operator (cel-go puts it on the `/`).
  assert.match(r.stderr, /^ERROR: <input>:1:\d: division by zero\n \| 1 \/ 0\n \| \.*\^\n$/);
});

test("-o json errors carry the stage", async () => {
  const compileErr = await cli(["expr", "-o", "json", "1 +"]);
  assert.equal(compileErr.code, 1);
  const c = JSON.parse(compileErr.stdout) as { error: string; stage: string };
  assert.equal(c.stage, "compile");
  assert.match(c.error, /^ERROR: <input>:1:/);

  const evalErr = await cli(["expr", "-o", "json", "{'a': 1}['b']"]);
  assert.equal(evalErr.code, 1);
  assert.deepEqual(JSON.parse(evalErr.stdout), { error: "no such key: b", stage: "eval" });
});

test("file options bind the admission variables; absent ones are null", async () => {
  const cases: [string[], string, string][] = [
    [["--object", "deploy.yaml"], "object.spec.replicas + 1", "8 (int)"],
    [["--old-object", "old.json"], "oldObject.spec.replicas", "3 (int)"],
    [["--params", "params.yaml"], "params.maxReplicas", "5 (int)"],
    [["--params", "params.yaml"], "params.big", '"9223372036854775807" (int)'],
    [["--namespace-object", "ns.yaml"], "namespaceObject.metadata.labels.env", '"prod" (string)'],
    [["--request", "review.json"], "request.operation", '"UPDATE" (string)'],
    [["--request", "review.json"], "object.spec.replicas - oldObject.spec.replicas", "1 (int)"],
    [["--request", "review.json", "--object", "deploy.yaml"], "object.spec.replicas", "7 (int)"],
    [[], "object == null && oldObject == null && params == null", "true (bool)"],
  ];
  for (const [flags, expr, expected] of cases) {
    const argv = ["expr", ...flags.map((f) => (f.includes(".") ? path(f) : f)), expr];
    const r = await cli(argv);
    assert.equal(r.stderr, "", expr);
    assert.equal(r.stdout, `${expected}\n`, expr);
    assert.equal(r.code, 0);
  }
});

test("--vars binds extra variables", async () => {
  const r = await cli(["expr", "--vars", '{"xs": [1, 2, 3], "n": 2}', "xs.filter(x, x >= n)"]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "[\n  2,\n  3\n] (list)\n");
});

test("--cel-extras turns on non-Kubernetes features", async () => {
  const off = await cli(["expr", "cel.bind(x, 2, x * x)"]);
  assert.equal(off.code, 1);
  assert.match(off.stderr, /ERROR: <input>:1:/);
  const on = await cli(["expr", "--cel-extras", "bind", "cel.bind(x, 2, x * x)"]);
  assert.equal(on.stderr, "");
  assert.equal(on.stdout, "4 (int)\n");
});

test("bad options and inputs: exit 2 with the reason and usage", async () => {
  const cases: [string[], RegExp][] = [
    [["expr", "--bogus", "1"], /unknown option '--bogus'/],
    [["expr"], /missing the expression/],
    [["expr", "1", "2"], /give one expression/],
    [["expr", "-o", "yaml", "1"], /unknown output format 'yaml'/],
    [["expr", "--object"], /argument missing/],
    [["expr", "--cel-extras", "strings", "1"], /unknown CEL extra 'strings'/],
    [["expr", "--vars", "{nope", "1"], /--vars is not JSON/],
    [["expr", "--vars", "[1]", "1"], /--vars must be a JSON object/],
    [["expr", "--vars", '{"a-b": 1}', "1"], /CEL identifiers: "a-b"/],
    [["expr", "--object", "/nonexistent/celgate/x.yaml", "1"], /cannot read \/nonexistent\/celgate\/x\.yaml/],
    [["expr", "--object", "two.yaml", "1"], /expected one YAML or JSON document, found 2/],
    [["expr", "--object", "broken.yaml", "1"], /broken\.yaml:\d+:\d+: not valid YAML or JSON/],
    [["expr", "--object", "deploy.yaml", "--vars", '{"object": 1}', "1"], /--vars binds object/],
    [["expr", "--batch", "1"], /--batch reads expressions from stdin/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv.map((a) => (/^\w+\.(yaml|json)$/.test(a) ? path(a) : a)));
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message, argv.join(" "));
    assert.match(r.stderr, /usage: celgate expr/, argv.join(" "));
    assert.equal(r.stdout, "");
  }
});

const BATCH_INPUT = [
  '{"expr": "x + 1", "vars": {"x": 41}}',
  "not json",
  "",
  '{"expr": "1 / 0"}',
  '{"expr": "y"}',
  '{"vars": {}}',
  '{"expr": "object.spec.replicas"}',
  '{"expr": "1", "vars": {"bad name": 1}}',
  "{\"expr\": \"[dyn(b'a'), dyn(duration('1s'))]\"}",
].join("\n");

const BATCH_OUTPUT = [
  { value: 42, type: "int" },
  { stage: "input" },
  { error: "division by zero", stage: "eval" },
  { stage: "compile" },
  { error: '"expr" must be a string', stage: "input" },
  { value: 7, type: "int" },
  { stage: "input" },
  { value: ["YQ==", "1s"], type: "list" },
];

for (const streamLines of [false, true]) {
  test(`--batch: one JSON line per input line, in order (${streamLines ? "streamed" : "whole"} stdin)`, async () => {
    const r = await cli(["expr", "--batch", "--object", path("deploy.yaml")], {
      stdin: `${BATCH_INPUT}\n`,
      streamLines,
    });
    assert.equal(r.code, 0);
    assert.equal(r.stderr, "");
    const lines = r.stdout.trimEnd().split("\n");
    assert.equal(lines.length, BATCH_OUTPUT.length);
    lines.forEach((line, i) => {
      const got = JSON.parse(line) as Record<string, unknown>;
      const want = BATCH_OUTPUT[i] as Record<string, unknown>;
      for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k], v, `line ${i}: ${k}`);
      assert.equal(typeof (got.error ?? got.type), "string", `line ${i}`);
    });
  });
}

test("--batch with empty stdin writes nothing", async () => {
  const r = await cli(["expr", "--batch"], { stdin: "" });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "");
});

test("--env: the MutatingAdmissionPolicy and webhook matchCondition environments (compilation.go, matchconditions)", async () => {
  // jsonpatch.escapeKey, Object{...} and JSONPatch{...} are declared only for mutations.
  const escapeKey = "jsonpatch.escapeKey('a/b')";
  const validating = await cli(["expr", escapeKey]);
  assert.equal(validating.code, 1);
  assert.match(validating.stderr, /undeclared reference to 'jsonpatch'/);
  const mutating = await cli(["expr", "--env", "mutating", escapeKey]);
  assert.equal(mutating.code, 0, mutating.stderr);
  assert.equal(mutating.stdout, '"a~1b" (string)\n');
  const patch = await cli([
    "expr",
    "--env",
    "mutating",
    "-o",
    "json",
    "[JSONPatch{op: 'replace', path: '/spec/replicas', value: object.spec.replicas - 2}]",
    "--object",
    path("deploy.yaml"),
  ]);
  assert.equal(patch.code, 0, patch.stderr);
  assert.deepEqual(JSON.parse(patch.stdout).value, [{ op: "replace", path: "/spec/replicas", value: 5 }]);
  // A webhook's matchConditions see object, oldObject, request and authorizer; not params.
  const match = await cli(["expr", "--env", "match", "params == null"]);
  assert.equal(match.code, 1);
  assert.match(match.stderr, /undeclared reference to 'params'/);
  assert.equal(
    (await cli(["expr", "--env", "match", "object.spec.replicas > 5", "--object", path("deploy.yaml")]))
      .stdout,
    "true (bool)\n",
  );
  const batch = await cli(["expr", "--env", "mutating", "--batch"], { stdin: `{"expr": "${escapeKey}"}\n` });
  assert.equal(batch.stdout, '{"value":"a~1b","type":"string"}\n');
  const bad = await cli(["expr", "--env", "mutate", "1"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown environment 'mutate'; expected validating, mutating, match/);
});
