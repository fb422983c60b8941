import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { complete } from "../../../src/adapters/repl/complete.ts";
import { ReplSession } from "../../../src/adapters/repl/session.ts";
import { removeTree, tempTree } from "../cli/fake-io.ts";

let dir = "";
let session: ReplSession;
before(async () => {
  dir = await tempTree({
    "pod.yaml":
      "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: app}]\n  nodeName: n1\n",
    "policies/a.yaml": "",
    "policy.yaml": "",
  });
  // The pod as written: the completions below are about completion, not about the API server's defaults.
  session = new ReplSession({ cwd: dir, extras: { math: true }, defaults: false });
  await session.handle(":object pod.yaml");
  await session.handle(":let limit = 3");
});
after(() => removeTree(dir));

const cases: [string, string[], string][] = [
  [":ob", [":object"], ":ob"],
  [":p", [":params", ":policy"], ":p"],
  ["obj", ["object"], "obj"],
  ["1 + li", ["limit", "list", "lists.range"], "li"],
  ["object.spec.con", ["containers"], "con"],
  [
    "object.spec.",
    [
      "containers",
      "nodeName",
      "all",
      "exists",
      "existsOne",
      "exists_one",
      "filter",
      // Kubernetes' lists v1 (1.37) declares it on dyn: any receiver may call it.
      "includes",
      "map",
      "size",
      "transformList",
      "transformMap",
    ],
    "",
  ],
  ["object.metadata.name.startsW", ["startsWith"], "startsW"],
  ["object.spec.containers.ex", ["exists", "existsOne", "exists_one"], "ex"],
  ["object.spec.containers[0].na", ["name"], "na"],
  ["variables.l", ["limit"], "l"],
  ["math.gre", ["greatest"], "gre"],
  ["quant", ["quantity"], "quant"],
  ["nope.x", [], "x"],
  [":policy pol", ["policies/", "policy.yaml"], "pol"],
  [":object ./p", ["./pod.yaml", "./policies/", "./policy.yaml"], "./p"],
  [":op UPD", [], ":op UPD"],
];

for (const [line, hits, replaced] of cases) {
  test(`complete ${JSON.stringify(line)}`, () => {
    assert.deepEqual(complete(session, line), [hits, replaced]);
  });
}

test("completions at the start of a name include variables, functions and has()", () => {
  const [hits] = complete(session, "s");
  for (const name of ["size", "string"]) assert.ok(hits.includes(name), name);
  const [h] = complete(session, "ha");
  assert.deepEqual(h, ["has"]);
});
