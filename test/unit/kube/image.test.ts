/**
 * The tag SetDefaults_Container reads from an image reference: kubernetes pkg/util/parsers
 * ParseImageName over github.com/distribution/reference v0.6.0 ParseNormalizedNamed (normalize.go,
 * reference.go, regexp.go) and go-digest v1.0.0's digest validation.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultPullPolicy, imageTag } from "../../../src/kube/defaults/image.ts";

const SHA256 = "a".repeat(64);

test("ParseImageName: a reference without tag or digest reads as latest", () => {
  for (const image of [
    "nginx",
    "library/nginx",
    "docker.io/library/nginx",
    "index.docker.io/nginx",
    "localhost/app",
  ])
    assert.equal(imageTag(image), "latest", image);
  // A registry port is not a tag.
  assert.equal(imageTag("localhost:5000/app"), "latest");
  assert.equal(imageTag("registry.example.com:5000/team/app"), "latest");
  assert.equal(imageTag("[::1]:5000/app"), "latest");
});

test("ParseImageName: the tag as written, with or without a digest", () => {
  assert.equal(imageTag("nginx:1.27"), "1.27");
  assert.equal(imageTag("nginx:latest"), "latest");
  assert.equal(imageTag("registry.example.com:5000/team/app:v2"), "v2");
  assert.equal(imageTag(`nginx:1.27@sha256:${SHA256}`), "1.27");
  assert.equal(imageTag(`nginx:latest@sha256:${SHA256}`), "latest");
  assert.equal(imageTag("nginx:Latest"), "Latest");
  assert.equal(imageTag(`app:${"t".repeat(128)}`), "t".repeat(128));
});

test("ParseImageName: a digest without a tag gives no tag (not latest)", () => {
  assert.equal(imageTag(`nginx@sha256:${SHA256}`), "");
  assert.equal(imageTag(`nginx@sha384:${"b".repeat(96)}`), "");
  assert.equal(imageTag(`nginx@sha512:${"c".repeat(128)}`), "");
});

test("ParseNormalizedNamed errors give no tag: SetDefaults_Container ignores the error", () => {
  const invalid = [
    "", // ErrNameEmpty
    "NGINX", // repository name must be lowercase
    "team/App:1", // an uppercase path after a domain-less first element
    SHA256, // cannot specify 64-byte hexadecimal strings
    "nginx:", // an empty tag
    "nginx:bad tag",
    `app:${"t".repeat(129)}`, // tags are at most 128 characters
    "nginx@sha256:abc", // too short for the digest pattern
    `nginx@sha256:${"A".repeat(64)}`, // sha256 encodings are lower case
    `nginx@sha256:${"a".repeat(63)}`, // the length of the algorithm's encoding
    `nginx@md5:${"a".repeat(32)}`, // an algorithm the API server does not have
    `nginx:latest@sha256:${"a".repeat(10)}`, // a tag does not save a bad digest
    `${"a".repeat(250)}/${"b".repeat(10)}`, // a repository path over 255 characters
  ];
  for (const image of invalid) assert.equal(imageTag(image), "", JSON.stringify(image));
});

test("splitDockerDomain: an uppercase or dotted first element is a registry", () => {
  assert.equal(imageTag("Registry.Example.com/app"), "latest");
  assert.equal(imageTag("MyRegistry/app:1"), "1");
  assert.equal(imageTag("Docker.io/nginx:2"), "2");
});

test("SetDefaults_Container: Always for latest, IfNotPresent otherwise (including no tag at all)", () => {
  assert.equal(defaultPullPolicy("nginx"), "Always");
  assert.equal(defaultPullPolicy("nginx:latest"), "Always");
  assert.equal(defaultPullPolicy("nginx:1.27"), "IfNotPresent");
  assert.equal(defaultPullPolicy(`nginx@sha256:${SHA256}`), "IfNotPresent");
  assert.equal(defaultPullPolicy("NGINX"), "IfNotPresent");
  assert.equal(defaultPullPolicy(""), "IfNotPresent");
});
