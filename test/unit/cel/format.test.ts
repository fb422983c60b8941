import assert from "node:assert/strict";
import { test } from "node:test";
import { celEquals } from "../../../src/cel/runtime/equality.ts";
import { type FormatValue, formatLibrary, NAMED_FORMATS } from "../../../src/cel/library/format.ts";
import { type CelValue, Optional } from "../../../src/cel/runtime/values.ts";
import { evaluate, libraryHarness } from "../../helpers/library.ts";

const { call } = libraryHarness(formatLibrary);

const format = (name: string): FormatValue => call(`format.${name}`, `format.${name}`) as FormatValue;

/** The messages `validate` returns, or undefined for none. */
function problems(name: string, s: string): readonly string[] | undefined {
  const r = call("validate", "format-validate", format(name), s);
  assert.ok(r instanceof Optional);
  return r.hasValue() ? (r.value() as readonly string[]) : undefined;
}

const LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_ERR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_ERR =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const cases: readonly [format: string, input: string, want: readonly string[] | undefined][] = [
  ["dns1123Label", "my-label-name", undefined],
  ["dns1123Label", "a", undefined],
  ["dns1123Label", "contains a space", [LABEL_ERR]],
  ["dns1123Label", "Upper", [LABEL_ERR]],
  ["dns1123Label", "-start", [LABEL_ERR]],
  ["dns1123Label", "", [LABEL_ERR]],
  ["dns1123Label", "has.dots", ["must not contain dots"]],
  ["dns1123Label", "a".repeat(63), undefined],
  ["dns1123Label", "a".repeat(64), ["must be no more than 63 characters"]],
  ["dns1123Label", `${"a".repeat(64)}-`, ["must be no more than 63 characters", LABEL_ERR]],
  ["dns1123Subdomain", "apiextensions.k8s.io", undefined],
  ["dns1123Subdomain", "example.com", undefined],
  ["dns1123Subdomain", "contains a space", [SUBDOMAIN_ERR]],
  ["dns1123Subdomain", "a..b", [SUBDOMAIN_ERR]],
  ["dns1123Subdomain", "a".repeat(254), ["must be no more than 253 characters"]],
  ["dns1035Label", "my-label-name", undefined],
  ["dns1035Label", "contains a space", [DNS1035_ERR]],
  ["dns1035Label", "1abc", [DNS1035_ERR]],
  ["qualifiedName", "apiextensions.k8s.io/v1beta1", undefined],
  ["qualifiedName", "my.name", undefined],
  ["qualifiedName", "MyName", undefined],
  ["qualifiedName", "contains a space", [NAME_PART_ERR]],
  ["qualifiedName", "/name", ["prefix part must be non-empty"]],
  ["qualifiedName", "example.com/", ["name part must be non-empty", NAME_PART_ERR]],
  ["qualifiedName", "Example.com/name", [`prefix part ${SUBDOMAIN_ERR}`]],
  ["qualifiedName", `x/${"a".repeat(64)}`, ["name part must be no more than 63 characters"]],
  [
    "qualifiedName",
    "a/b/c",
    [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ],
  ],
  // Prefix formats allow a trailing '-', since a generated suffix follows.
  ["dns1123LabelPrefix", "my-label-prefix-", undefined],
  ["dns1123LabelPrefix", "contains a space-", [LABEL_ERR]],
  ["dns1123SubdomainPrefix", "mysubdomain.prefix.-", undefined],
  ["dns1123SubdomainPrefix", "contains a space-", [SUBDOMAIN_ERR]],
  ["dns1035LabelPrefix", "my-label-prefix-", undefined],
  ["dns1035LabelPrefix", "contains a space-", [DNS1035_ERR]],
  // Kubernetes masks the last two characters, not one, so a dash after a dot still passes.
  ["dns1123SubdomainPrefix", "a.-", undefined],
  ["dns1123LabelPrefix", "-", [LABEL_ERR]],
  ["labelValue", "my-cool-label-Value", undefined],
  ["labelValue", "", undefined],
  ["labelValue", "my-cool-label-Value!!\n\n!!!", [LABEL_VALUE_ERR]],
  ["labelValue", "trailing\n", [LABEL_VALUE_ERR]],
  ["labelValue", "a".repeat(64), ["must be no more than 63 characters"]],
  ["uri", "http://example.com", undefined],
  ["uri", "/just/a/path", undefined],
  ["uri", "relative/path", ['parse "relative/path": invalid URI for request']],
  ["uri", "https://a:b:c/", ['parse "https://a:b:c/": invalid port ":c" after host']],
  ["uuid", "123e4567-e89b-12d3-a456-426614174000", undefined],
  ["uuid", "123E4567E89B12D3A456426614174000", undefined],
  ["uuid", "123e4567-e89b-12d3-a456-42661417400", ["does not match the UUID format"]],
  ["uuid", "g23e4567-e89b-12d3-a456-426614174000", ["does not match the UUID format"]],
  ["byte", "aGVsbG8=", undefined],
  ["byte", "aGVsbG8h", undefined],
  ["byte", "aGVsbG8", ["invalid base64"]],
  ["byte", "", ["invalid base64"]],
  ["byte", "aGVs-G8=", ["invalid base64"]],
  ["date", "2021-01-01", undefined],
  ["date", "2020-02-29", undefined],
  ["date", "2020-01-32", ["invalid date"]],
  ["date", "2021-02-29", ["invalid date"]],
  ["date", "2021-13-01", ["invalid date"]],
  ["date", "2021-1-01", ["invalid date"]],
  ["date", "2021-01-01T00:00:00Z", ["invalid date"]],
  ["datetime", "2021-01-01T00:00:00Z", undefined],
  ["datetime", "2020-01-01T00:00:00Z", undefined],
  ["datetime", "2020-01-01t23:59:59.123+02:00", undefined],
  ["datetime", "2020-01-32T00:00:00Z", ["invalid datetime"]],
  ["datetime", "2020-01-01T24:00:00Z", ["invalid datetime"]],
  ["datetime", "2020-01-01T00:00:00", ["invalid datetime"]],
  ["datetime", "2020-01-01 00:00:00Z", ["invalid datetime"]],
];

test("validate() returns none or Kubernetes' messages", () => {
  for (const [name, input, want] of cases) {
    assert.deepEqual(problems(name, input), want, `${name}: ${JSON.stringify(input)}`);
  }
});

test("every named format has a constant, and format.named finds it", () => {
  const names = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
  ];
  assert.deepEqual([...NAMED_FORMATS.keys()], names);
  for (const name of names) {
    const looked = call("format.named", "format-named", name);
    assert.ok(looked instanceof Optional && looked.hasValue(), name);
    assert.equal((looked.value() as FormatValue).celType, "kubernetes.NamedFormat");
    assert.ok(celEquals(looked.value(), format(name)), name);
    for (const other of names) {
      if (other !== name) assert.equal(celEquals(format(name), format(other)), false, `${name} vs ${other}`);
    }
  }
  for (const missing of ["unknown", "DNS1123Label", ""]) {
    const r = call("format.named", "format-named", missing);
    assert.ok(r instanceof Optional && !r.hasValue(), missing);
  }
  assert.equal(format("uuid").toJSON(), "uuid");
});

test("format expressions evaluate end to end", () => {
  const cases: [string, CelValue][] = [
    [`format.dns1123Label().validate("my-label-name").hasValue()`, false],
    [`format.dns1123Label().validate("Foo").value().size()`, 1n],
    [`format.named("unknown").hasValue()`, false],
    [`format.named("uuid").value() == format.uuid()`, true],
    [`format.uuid() == format.byte()`, false],
    [`format.byte().validate("aGVsbG8").value()[0]`, "invalid base64"],
  ];
  for (const [expr, want] of cases) {
    const r = evaluate(expr);
    assert.ok(r.ok, `${expr}: ${r.ok ? "" : r.error}`);
    assert.equal(r.value, want, expr);
  }
});
