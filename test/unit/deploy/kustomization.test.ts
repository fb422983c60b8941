/** The ConfigMap generator's file list, written from the loaded policy files (src/manifests/kustomization.ts). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { configMapFiles, withGeneratorFiles } from "../../../src/manifests/kustomization.ts";

const TEXT = `# a comment that stays
resources: [a.yaml]
configMapGenerator:
  # the one to write
  - name: celgate-policies
    files:
      - ../policies/old.yaml
  - name: other
    files: [x.txt]
`;

void test("the generator's files are replaced; comments, order and the other generators stay", () => {
  const out = withGeneratorFiles(TEXT, "celgate-policies", ["../policies/a.yaml", "../policies/b.yaml"]);
  assert.equal(
    out,
    TEXT.replace(
      "      - ../policies/old.yaml\n",
      "      - ../policies/a.yaml\n      - ../policies/b.yaml\n",
    ),
  );
  assert.equal(
    withGeneratorFiles(out, "celgate-policies", ["../policies/a.yaml", "../policies/b.yaml"]),
    out,
  );
  assert.throws(() => withGeneratorFiles(TEXT, "missing", []), /no configMapGenerator named missing/);
});

void test("files are relative, sorted, and fixtures are not deployed", () => {
  assert.deepEqual(
    configMapFiles(["/r/policies/z.yaml", "/r/policies/fixtures/pods.yaml", "/r/policies/a.yaml"], (f) =>
      f.replace("/r/", "../"),
    ),
    ["../policies/a.yaml", "../policies/z.yaml"],
  );
});
