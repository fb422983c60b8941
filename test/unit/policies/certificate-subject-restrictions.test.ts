/**
 * policies/certificate-subject-restrictions.yaml against signed requests of every shape "system:masters"
 * can take in them. The plugin it stands in for
 * (plugin/pkg/admission/certificates/subjectrestriction/admission.go) denies a
 * kubernetes.io/kube-apiserver-client CSR whenever the subject's organizations hold system:masters,
 * in any string type Go's parser reads, whatever else the subject holds, however the PEM is laid out
 * (Go's encoding/pem: spaces and tabs inside the body are dropped, lines end in \n or \r\n, text
 * before the block is skipped).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { decide as enforce } from "../../../src/engine/decision.ts";
import { validate } from "../../../src/engine/validating.ts";
import { compileText, contextFor, FAR } from "../../helpers/engine.ts";
import { csrDer, MASTERS, pem, STRING_TAGS, type StringType } from "./csr.ts";

const set = compileText(
  readFileSync(new URL("../../../policies/certificate-subject-restrictions.yaml", import.meta.url), "utf8"),
);

type Org = { value: string; type: StringType };

/** The CREATE request, spec.request as the API server hands it to admission: base64 of the PEM. */
function review(pemText: string, signerName = "kubernetes.io/kube-apiserver-client") {
  const gvk = { group: "certificates.k8s.io", version: "v1", kind: "CertificateSigningRequest" };
  const gvr = { group: "certificates.k8s.io", version: "v1", resource: "certificatesigningrequests" };
  return {
    uid: "1",
    kind: gvk,
    resource: gvr,
    name: "csr",
    namespace: "",
    operation: "CREATE" as const,
    userInfo: { username: "mallory", groups: ["system:authenticated"] },
    object: {
      apiVersion: "certificates.k8s.io/v1",
      kind: "CertificateSigningRequest",
      metadata: { name: "csr" },
      spec: { signerName, usages: ["client auth"], request: Buffer.from(pemText).toString("base64") },
    },
    oldObject: null,
    dryRun: false,
    options: null,
  };
}

function decide(pemText: string) {
  return enforce(validate(set, review(pemText), contextFor(set), { deadline: FAR() }));
}

const MASTERS_MESSAGE =
  /denied request: use of kubernetes\.io\/kube-apiserver-client signer with system:masters group is not allowed$/;

// Common names of 1 to 24 characters move the organization through every byte alignment of both
// base64 layers and across the PEM's line breaks.
void test("system:masters is denied at every alignment, in every string type, with \\n or \\r\\n lines", () => {
  const types = Object.keys(STRING_TAGS) as StringType[];
  let denied = 0;
  for (let n = 1; n <= 24; n++)
    for (const type of types)
      for (const eol of ["\n", "\r\n"])
        for (const before of [[], [{ value: "developers", type: "utf8" }]] as Org[][]) {
          const d = decide(
            pem(
              csrDer({ commonName: "x".repeat(n), organizations: [...before, { value: MASTERS, type }] }),
              eol,
            ),
          );
          const what = `CN of ${n}, ${type}, ${JSON.stringify(eol)}, ${before.length} before`;
          assert.equal(d.allowed, false, what);
          assert.match(d.status?.message ?? "", MASTERS_MESSAGE, what);
          assert.equal(d.status?.code, 403);
          denied++;
        }
  assert.equal(denied, 24 * 4 * 2 * 2);
});

void test("other organizations, and system:masters for another signer, are allowed", () => {
  for (let n = 1; n <= 24; n++)
    for (const value of ["system:nodes", "system:master", "system:masterz", "webmasters", "developers"]) {
      const d = decide(pem(csrDer({ commonName: "y".repeat(n), organizations: [{ value, type: "utf8" }] })));
      assert.equal(d.allowed, true, `${value}, CN of ${n}: ${d.status?.message}`);
    }
  const kubelet = review(
    pem(csrDer({ commonName: "n", organizations: [{ value: MASTERS, type: "utf8" }] })),
    "kubernetes.io/kubelet-serving",
  );
  assert.equal(enforce(validate(set, kubelet, contextFor(set), { deadline: FAR() })).allowed, true);
});

void test("what Go's PEM decoder accepts and a search of the text would miss is still denied", () => {
  const der = csrDer({ commonName: "mallory", organizations: [{ value: MASTERS, type: "utf8" }] });
  const b64 = der.toString("base64");
  const layouts: Record<string, string> = {
    // Spaces and tabs anywhere in the body (encoding/pem removeSpacesAndTabs).
    "spaces and tabs": `-----BEGIN CERTIFICATE REQUEST-----\n${b64.replace(/(.{3})/g, "$1 \t")}\n-----END CERTIFICATE REQUEST-----\n`,
    "lines of 7": `-----BEGIN CERTIFICATE REQUEST-----\n${(b64.match(/.{1,7}/g) ?? []).join("\n")}\n-----END CERTIFICATE REQUEST-----\n`,
    "text before the block": `Certificate Request:\n    Data: ...\n${pem(der)}`,
    "one line": `-----BEGIN CERTIFICATE REQUEST-----\n${b64}\n-----END CERTIFICATE REQUEST-----`,
  };
  for (const [name, text] of Object.entries(layouts)) {
    const d = decide(text);
    assert.equal(d.allowed, false, name);
    assert.match(d.status?.message ?? "", MASTERS_MESSAGE, name);
  }
});

void test("a PEM with headers, or whose first block is not the request, is denied as such", () => {
  const der = csrDer({ commonName: "alice", organizations: [{ value: "developers", type: "utf8" }] });
  const structural = /spec\.request must start with one PEM CERTIFICATE REQUEST block, without PEM headers$/;
  const withHeaders = pem(der).replace("-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n");
  const otherFirst = `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n${pem(der)}`;
  for (const text of [withHeaders, otherFirst, "not a pem at all"]) {
    const d = decide(text);
    assert.equal(d.allowed, false, text);
    assert.match(d.status?.message ?? "", structural, text);
  }
  assert.equal(decide(pem(der)).allowed, true);
});

void test("the cost grows with the request and stays far inside Kubernetes' limits", () => {
  const small = decide(pem(csrDer({ commonName: "a", organizations: [] })));
  // A large request: many organizations, about 4 KiB of DER.
  const many = Array.from({ length: 160 }, (_, i) => ({
    value: `team-${String(i).padStart(12, "0")}`,
    type: "utf8" as const,
  }));
  const largeDer = csrDer({ commonName: "a", organizations: many });
  const large = decide(pem(largeDer));
  assert.equal(large.allowed, true);
  assert.ok(largeDer.length > 4000, String(largeDer.length));
  // The per-expression limit is 1,000,000 and the policy's budget 10,000,000 (apiserver cel config.go).
  assert.ok(large.cost < 1_000_000, `cost ${large.cost}`);
  assert.ok(large.cost > small.cost);
});
