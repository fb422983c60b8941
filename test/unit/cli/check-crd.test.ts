/**
 * `celgate check --crd FILE|DIR`: CustomResourceDefinitions given apart from the policies type the
 * custom resources a policy matches (src/compile/schema-typing.ts; Kubernetes' SchemaDeclType,
 * staging/src/k8s.io/apiserver/pkg/cel/common/schemas.go), as warnings; a CRD whose schema is not
 * structural is an error (apiextensions-apiserver pkg/apiserver/schema/validation.go).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { cli, removeTree, tempTree } from "./fake-io.ts";

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: { kind: Widget, plural: widgets }
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer }
                containers:
                  type: array
                  items: { type: object, properties: { name: { type: string } } }
`;

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: widgets.example.com
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: ["example.com"]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["widgets"]
  validations:
    - expression: "object.spec.size <= 5"
    - expression: "object.spec.containres.size() < 3"
`;

let dir = "";
const path = (name: string) => join(dir, name);

before(async () => {
  dir = await tempTree({
    "policies/policy.yaml": POLICY,
    "crds/widgets.yaml": CRD,
    "bad-crds/widgets.yaml": CRD.replace("size: { type: integer }", "size: { description: no type }"),
    "together/policy.yaml": POLICY,
    "together/crd.yaml": CRD,
    "none/README.md": "no CRDs here",
  });
});
after(() => removeTree(dir));

test("--crd FILE: object typed from the CRD's schema; a misspelt field is a warning with a did-you-mean", async () => {
  const r = await cli(["check", path("policies"), "--crd", path("crds/widgets.yaml")]);
  assert.equal(r.code, 0, r.stdout);
  assert.match(
    r.stdout,
    /policy\.yaml:14:\d+: warning: spec\.validations\[1\]\.expression: undefined field 'containres' \[PE_CEL_UNKNOWN_IDENT\]\n/,
  );
  assert.match(
    r.stdout,
    /\(with object typed as Widget from its schema\)\nhint: did you mean 'containers'\?\n/,
  );
  assert.match(r.stdout, /1 policy, 0 bindings, 1 problem \(0 errors, 1 warning\)\n$/);
  // --strict fails on the warning; without the CRD the policy checks clean (object is dyn).
  assert.equal((await cli(["check", "--strict", path("policies"), "--crd", path("crds")])).code, 1);
  const without = await cli(["check", path("policies")]);
  assert.match(without.stdout, /1 policy, 0 bindings, 0 problems\n$/);
});

test("a CRD among the PATHs types the same way", async () => {
  const r = await cli(["check", path("together")]);
  assert.match(r.stdout, /undefined field 'containres'/);
});

test("a PATH holding only a CRD, beside one holding the policy, is no PE_NO_POLICIES (check --strict crd.yaml policy.yaml)", async () => {
  const r = await cli(["check", "--strict", path("together/crd.yaml"), path("policies/policy.yaml")]);
  assert.doesNotMatch(r.stdout, /PE_NO_POLICIES/);
  assert.match(r.stdout, /undefined field 'containres'/, "the CRD types the policy");
  // Alone, a CRD file still holds no policy: the warning stays.
  const alone = await cli(["check", path("together/crd.yaml")]);
  assert.match(
    alone.stdout,
    /crd\.yaml holds no ValidatingAdmissionPolicy, MutatingAdmissionPolicy or binding \[PE_NO_POLICIES\]/,
  );
});

test("--crd DIR with a schema that is not structural: PE_CRD_SCHEMA error at the fault, kind untyped", async () => {
  const r = await cli(["check", path("policies"), "--crd", path("bad-crds")]);
  assert.equal(r.code, 1);
  assert.match(
    r.stdout,
    /bad-crds\/widgets\.yaml:\d+:\d+: error: spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.spec\.properties\.size\.type: Required value: must not be empty for specified object fields/,
  );
  assert.doesNotMatch(r.stdout, /containres/);
});

test("--crd PATH that holds no CustomResourceDefinition is a warning, as an empty PATH is", async () => {
  const r = await cli(["check", path("policies"), "--crd", path("none")]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /warning: --crd .*none holds no CustomResourceDefinition \[PE_NO_POLICIES\]/);
});

test("--crd with --matrix or --static-manifests, which type nothing from schemas, is a usage error", async () => {
  const m = await cli(["check", "--matrix", path("policies"), "--crd", path("crds")]);
  assert.equal(m.code, 2);
  assert.match(
    m.stderr,
    /--matrix reports what each release accepts, without schema typing: give no --crd with it/,
  );
  const s = await cli(["check", "--static-manifests", path("policies"), "--crd", path("crds")]);
  assert.equal(s.code, 2);
  assert.match(s.stderr, /give no --crd with it/);
});
