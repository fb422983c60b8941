/**
 * Kubernetes' own CEL libraries (k8s.io/apiserver/pkg/cel/library), with the release whose
 * admission environment first has each (environment/base.go). Their types are object types
 * (cel.ObjectType) without fields: `kubernetes.Quantity`, `net.IP`, `kubernetes.URL`, ...
 */
import { fn, global, type LibraryDecl, member } from "./model.ts";

export const regexDecls: LibraryDecl = {
  name: "kubernetes.regex",
  kubernetes: "1.0",
  functions: [
    fn("find", member("string_find_string", "string.(string) -> string")),
    fn(
      "findAll",
      member("string_find_all_string", "string.(string) -> list(string)"),
      member("string_find_all_string_int", "string.(string, int) -> list(string)"),
    ),
  ],
};

export const urlsDecls: LibraryDecl = {
  name: "kubernetes.urls",
  kubernetes: "1.0",
  functions: [
    fn("url", global("string_to_url", "(string) -> kubernetes.URL")),
    fn("getScheme", member("url_get_scheme", "kubernetes.URL.() -> string")),
    fn("getHost", member("url_get_host", "kubernetes.URL.() -> string")),
    fn("getHostname", member("url_get_hostname", "kubernetes.URL.() -> string")),
    fn("getPort", member("url_get_port", "kubernetes.URL.() -> string")),
    fn("getEscapedPath", member("url_get_escaped_path", "kubernetes.URL.() -> string")),
    fn("getQuery", member("url_get_query", "kubernetes.URL.() -> map(string, list(string))")),
    fn("isURL", global("is_url_string", "(string) -> bool")),
  ],
};

const AUTHZ = "kubernetes.authorization";

export const authzDecls: LibraryDecl = {
  name: "kubernetes.authz",
  kubernetes: "1.27",
  functions: [
    fn("path", member("authorizer_path", `${AUTHZ}.Authorizer.(string) -> ${AUTHZ}.PathCheck`)),
    fn("group", member("authorizer_group", `${AUTHZ}.Authorizer.(string) -> ${AUTHZ}.GroupCheck`)),
    fn(
      "serviceAccount",
      member("authorizer_serviceaccount", `${AUTHZ}.Authorizer.(string, string) -> ${AUTHZ}.Authorizer`),
    ),
    fn("resource", member("groupcheck_resource", `${AUTHZ}.GroupCheck.(string) -> ${AUTHZ}.ResourceCheck`)),
    fn(
      "subresource",
      member("resourcecheck_subresource", `${AUTHZ}.ResourceCheck.(string) -> ${AUTHZ}.ResourceCheck`),
    ),
    fn(
      "namespace",
      member("resourcecheck_namespace", `${AUTHZ}.ResourceCheck.(string) -> ${AUTHZ}.ResourceCheck`),
    ),
    fn("name", member("resourcecheck_name", `${AUTHZ}.ResourceCheck.(string) -> ${AUTHZ}.ResourceCheck`)),
    fn(
      "check",
      member("pathcheck_check", `${AUTHZ}.PathCheck.(string) -> ${AUTHZ}.Decision`),
      member("resourcecheck_check", `${AUTHZ}.ResourceCheck.(string) -> ${AUTHZ}.Decision`),
    ),
    fn("errored", member("decision_errored", `${AUTHZ}.Decision.() -> bool`)),
    fn("error", member("decision_error", `${AUTHZ}.Decision.() -> string`)),
    fn("allowed", member("decision_allowed", `${AUTHZ}.Decision.() -> bool`)),
    fn("reason", member("decision_reason", `${AUTHZ}.Decision.() -> string`)),
  ],
};

/** authz.go's AuthzSelectors (Kubernetes 1.31+): selectors on a resource check. */
export const authzSelectorsDecls: LibraryDecl = {
  name: "kubernetes.authzSelectors",
  kubernetes: "1.31",
  functions: [
    fn(
      "fieldSelector",
      member("authorizer_fieldselector", `${AUTHZ}.ResourceCheck.(string) -> ${AUTHZ}.ResourceCheck`),
    ),
    fn(
      "labelSelector",
      member("authorizer_labelselector", `${AUTHZ}.ResourceCheck.(string) -> ${AUTHZ}.ResourceCheck`),
    ),
  ],
};

const Q = "kubernetes.Quantity";

export const quantityDecls: LibraryDecl = {
  name: "kubernetes.quantity",
  kubernetes: "1.28",
  functions: [
    fn("quantity", global("string_to_quantity", `(string) -> ${Q}`)),
    fn("isQuantity", global("is_quantity_string", "(string) -> bool")),
    // A global function in Kubernetes (cel.Overload), though its documentation shows `q.sign()`:
    // the member form does not type-check in the API server.
    fn("sign", global("quantity_sign", `(${Q}) -> int`)),
    fn("isGreaterThan", member("quantity_is_greater_than", `${Q}.(${Q}) -> bool`)),
    fn("isLessThan", member("quantity_is_less_than", `${Q}.(${Q}) -> bool`)),
    fn("compareTo", member("quantity_compare_to", `${Q}.(${Q}) -> int`)),
    fn("asApproximateFloat", member("quantity_get_float", `${Q}.() -> double`)),
    fn("asInteger", member("quantity_get_int", `${Q}.() -> int`)),
    fn("isInteger", member("quantity_is_integer", `${Q}.() -> bool`)),
    fn(
      "add",
      member("quantity_add", `${Q}.(${Q}) -> ${Q}`),
      member("quantity_add_int", `${Q}.(int) -> ${Q}`),
    ),
    fn(
      "sub",
      member("quantity_sub", `${Q}.(${Q}) -> ${Q}`),
      member("quantity_sub_int", `${Q}.(int) -> ${Q}`),
    ),
  ],
};

export const ipDecls: LibraryDecl = {
  name: "kubernetes.net.ip",
  kubernetes: "1.30",
  functions: [
    fn("ip", global("string_to_ip", "(string) -> net.IP")),
    fn("family", member("ip_family", "net.IP.() -> int")),
    fn("ip.isCanonical", global("ip_is_canonical", "(string) -> bool")),
    fn("isUnspecified", member("ip_is_unspecified", "net.IP.() -> bool")),
    fn("isLoopback", member("ip_is_loopback", "net.IP.() -> bool")),
    fn("isLinkLocalMulticast", member("ip_is_link_local_multicast", "net.IP.() -> bool")),
    fn("isLinkLocalUnicast", member("ip_is_link_local_unicast", "net.IP.() -> bool")),
    fn("isGlobalUnicast", member("ip_is_global_unicast", "net.IP.() -> bool")),
    fn("isIP", global("is_ip", "(string) -> bool")),
    fn("string", global("ip_to_string", "(net.IP) -> string")),
  ],
};

export const cidrDecls: LibraryDecl = {
  name: "net.cidr",
  kubernetes: "1.30",
  functions: [
    fn("cidr", global("string_to_cidr", "(string) -> net.CIDR")),
    fn(
      "containsIP",
      member("cidr_contains_ip_string", "net.CIDR.(string) -> bool"),
      member("cidr_contains_ip_ip", "net.CIDR.(net.IP) -> bool"),
    ),
    fn(
      "containsCIDR",
      member("cidr_contains_cidr_string", "net.CIDR.(string) -> bool"),
      member("cidr_contains_cidr", "net.CIDR.(net.CIDR) -> bool"),
    ),
    fn("ip", member("cidr_ip", "net.CIDR.() -> net.IP")),
    fn("prefixLength", member("cidr_prefix_length", "net.CIDR.() -> int")),
    fn("masked", member("cidr_masked", "net.CIDR.() -> net.CIDR")),
    fn("isCIDR", global("is_cidr", "(string) -> bool")),
    fn("string", global("cidr_to_string", "(net.CIDR) -> string")),
  ],
};

const NAMED_FORMATS = [
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

export const formatDecls: LibraryDecl = {
  name: "format",
  kubernetes: "1.31",
  functions: [
    fn(
      "validate",
      member("format-validate", "kubernetes.NamedFormat.(string) -> optional_type(list(string))"),
    ),
    fn("format.named", global("format-named", "(string) -> optional_type(kubernetes.NamedFormat)")),
    ...NAMED_FORMATS.map((n) => fn(`format.${n}`, global(`format.${n}`, "() -> kubernetes.NamedFormat"))),
  ],
};

const S = "kubernetes.Semver";

export const semverDecls: LibraryDecl = {
  name: "kubernetes.Semver",
  kubernetes: "1.33",
  functions: [
    fn(
      "semver",
      global("string_to_semver", `(string) -> ${S}`),
      global("string_bool_to_semver", `(string, bool) -> ${S}`),
    ),
    fn(
      "isSemver",
      global("is_semver_string", "(string) -> bool"),
      global("is_semver_string_bool", "(string, bool) -> bool"),
    ),
    fn("isGreaterThan", member("semver_is_greater_than", `${S}.(${S}) -> bool`)),
    fn("isLessThan", member("semver_is_less_than", `${S}.(${S}) -> bool`)),
    fn("compareTo", member("semver_compare_to", `${S}.(${S}) -> int`)),
    fn("major", member("semver_major", `${S}.() -> int`)),
    fn("minor", member("semver_minor", `${S}.() -> int`)),
    fn("patch", member("semver_patch", `${S}.() -> int`)),
  ],
};

/** MutatingAdmissionPolicy's environment only (admission/plugin/cel/compile.go hasPatchTypes). */
export const jsonpatchDecls: LibraryDecl = {
  name: "kubernetes.jsonpatch",
  kubernetes: "1.32",
  functions: [fn("jsonpatch.escapeKey", global("string_jsonpatch_escapeKey_string", "(string) -> string"))],
};
