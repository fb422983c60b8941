/**
 * The tag of a container image reference, as the API server reads it to default `imagePullPolicy`:
 * `parsers.ParseImageName` (kubernetes pkg/util/parsers/parsers.go) over
 * `reference.ParseNormalizedNamed` (github.com/distribution/reference v0.6.0, normalize.go,
 * reference.go, regexp.go) and digest validation (github.com/opencontainers/go-digest v1.0.0).
 *
 * A reference with neither tag nor digest reads as `latest`; one with only a digest has no tag; one
 * that does not parse yields no tag either, because SetDefaults_Container ignores the parse error
 * and reads the empty tag it is handed.
 */

const ALPHANUMERIC = "[a-z0-9]+";
const SEPARATOR = "(?:[._]|__|[-]+)";
const PATH_COMPONENT = `${ALPHANUMERIC}(?:${SEPARATOR}${ALPHANUMERIC})*`;
const REMOTE_NAME = `${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const DOMAIN_NAME_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const DOMAIN_NAME = `${DOMAIN_NAME_COMPONENT}(?:\\.${DOMAIN_NAME_COMPONENT})*`;
const IPV6_ADDRESS = "\\[(?:[a-fA-F0-9:]+)\\]";
const DOMAIN_AND_PORT = `(?:${DOMAIN_NAME}|${IPV6_ADDRESS})(?::[0-9]+)?`;
const NAME = `(?:${DOMAIN_AND_PORT}/)?${REMOTE_NAME}`;
const TAG = "[\\w][\\w.-]{0,127}";
const DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}";

const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);
const ANCHORED_NAME = new RegExp(`^(?:(${DOMAIN_AND_PORT})/)?(${REMOTE_NAME})$`);
const ANCHORED_IDENTIFIER = /^[a-f0-9]{64}$/;

/** reference.RepositoryNameTotalLengthMax: the longest repository path accepted. */
const REPOSITORY_NAME_MAX = 255;

/** The digest algorithms available to the API server (parsers.go imports sha256 and sha512), each with its encoding. */
const DIGEST_ENCODINGS: Readonly<Record<string, RegExp>> = {
  sha256: /^[a-f0-9]{64}$/,
  sha384: /^[a-f0-9]{96}$/,
  sha512: /^[a-f0-9]{128}$/,
};

const DEFAULT_DOMAIN = "docker.io";
const LEGACY_DEFAULT_DOMAIN = "index.docker.io";
const OFFICIAL_REPO_PREFIX = "library/";

/** splitDockerDomain: the registry domain and the rest, with Docker Hub's familiar names expanded. */
function splitDockerDomain(name: string): { domain: string; remainder: string } {
  const slash = name.indexOf("/");
  if (slash < 0) return { domain: DEFAULT_DOMAIN, remainder: OFFICIAL_REPO_PREFIX + name };
  const maybeDomain = name.slice(0, slash);
  const rest = name.slice(slash + 1);
  let domain: string;
  let remainder: string;
  if (maybeDomain === "localhost") [domain, remainder] = [maybeDomain, rest];
  else if (maybeDomain === LEGACY_DEFAULT_DOMAIN) [domain, remainder] = [DEFAULT_DOMAIN, rest];
  else if (/[.:]/.test(maybeDomain)) [domain, remainder] = [maybeDomain, rest];
  else if (maybeDomain.toLowerCase() !== maybeDomain) [domain, remainder] = [maybeDomain, rest];
  else [domain, remainder] = [DEFAULT_DOMAIN, name];
  if (domain === DEFAULT_DOMAIN && !remainder.includes("/")) remainder = OFFICIAL_REPO_PREFIX + remainder;
  return { domain, remainder };
}

/** digest.Parse: `algorithm:encoded` with an available algorithm and an encoding of its exact length. */
function validDigest(digest: string): boolean {
  const colon = digest.indexOf(":");
  if (colon <= 0 || colon + 1 === digest.length) return false;
  const encoding = DIGEST_ENCODINGS[digest.slice(0, colon)];
  return encoding?.test(digest.slice(colon + 1)) ?? false;
}

/** The tag and digest of a reference, or undefined when ParseNormalizedNamed rejects it. */
function parseNormalizedNamed(s: string): { tag: string; digest: string } | undefined {
  if (ANCHORED_IDENTIFIER.test(s)) return undefined;
  const { domain, remainder } = splitDockerDomain(s);
  const colon = remainder.indexOf(":");
  const remote = colon < 0 ? remainder : remainder.slice(0, colon);
  if (remote.toLowerCase() !== remote) return undefined;
  const m = REFERENCE.exec(`${domain}/${remainder}`);
  if (!m) return undefined;
  const path = ANCHORED_NAME.exec(m[1] ?? "")?.[2] ?? m[1] ?? "";
  if (path.length > REPOSITORY_NAME_MAX) return undefined;
  const digest = m[3] ?? "";
  if (digest !== "" && !validDigest(digest)) return undefined;
  return { tag: m[2] ?? "", digest };
}

/** ParseImageName's tag: the reference's own, `latest` when it has neither tag nor digest, "" when it does not parse. */
export function imageTag(image: string): string {
  const parsed = parseNormalizedNamed(image);
  if (!parsed) return "";
  return parsed.tag === "" && parsed.digest === "" ? "latest" : parsed.tag;
}

/** The pull policy SetDefaults_Container (and SetDefaults_Volume, for image volumes) gives an image. */
export function defaultPullPolicy(image: string): "Always" | "IfNotPresent" {
  return imageTag(image) === "latest" ? "Always" : "IfNotPresent";
}
