/**
 * The model of a policy test suite (`*.test.yaml`) once parsed: groups flattened, defaults merged
 * into every case, and each value remembering the field path it was written at, so that problems
 * found later (a missing object file) are reported where the user wrote the value.
 */
import type { AuthorizerRule } from "../cel/index.ts";
import type { SourceLocation } from "../errors.ts";
import type { JsonPatchOp } from "../engine/types.ts";
import type { GroupVersionKind, GroupVersionResource, UserInfo } from "../request/types.ts";
import type { Operation } from "../policy/types.ts";

export const SUITE_API_VERSION = "celgate.dev/v1alpha1";
export const SUITE_KIND = "PolicyTest";

export type JsonObject = Record<string, unknown>;

/** A value and the field path (`cases[2].objectFile`) where it was written. */
export interface At<T> {
  readonly value: T;
  readonly path: string;
}

/** A file named in the suite, resolved against the suite file's directory. */
export interface FileRef {
  /** As written in the suite. */
  readonly written: string;
  /** Resolved path to read. */
  readonly resolved: string;
}

/** An object given inline or by file. */
export type ObjectSource =
  | { readonly inline: JsonObject; readonly file?: undefined }
  | { readonly file: FileRef; readonly inline?: undefined };

export interface Expectations {
  readonly allowed?: boolean;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly messageMatches?: string;
  readonly warnings?: readonly string[];
  readonly warningsMatch?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  readonly matched?: readonly string[];
  readonly skipped?: readonly string[];
  readonly patched?: unknown;
  readonly patch?: readonly JsonPatchOp[];
  readonly unchanged?: boolean;
}

export type ExpectKey = keyof Expectations;

/** Every expectation key, in the order reports list them. */
export const EXPECT_KEYS: readonly ExpectKey[] = [
  "allowed",
  "code",
  "reason",
  "message",
  "messageMatches",
  "warnings",
  "warningsMatch",
  "auditAnnotations",
  "matched",
  "skipped",
  "patched",
  "patch",
  "unchanged",
];

/** What every case has: its name and place, its expectations, and the Namespace it is given. */
interface CaseCommon {
  /** The case's name, prefixed by its groups' names (`init containers / runs as root`). */
  readonly name: string;
  /** Its groups' names and its own, apart (`["init containers", "runs as root"]`), for `--run`. */
  readonly namePath: readonly string[];
  /** Where the case is in the suite (`cases[3].cases[0]`). */
  readonly path: string;
  readonly location: SourceLocation;
  readonly namespaceObject?: At<JsonObject>;
  readonly expect: Expectations;
  /** Where each expectation was written, for reports. */
  readonly expectPaths: Readonly<Partial<Record<ExpectKey, string>>>;
}

/** One case, ready to run: defaults merged, operation decided, objects still to be read. */
export interface ObjectCase extends CaseCommon {
  readonly review?: undefined;
  readonly operation: Operation;
  /** The object being written, or for DELETE the object being deleted. */
  readonly object: At<ObjectSource>;
  /** The stored object of an UPDATE. */
  readonly oldObject?: At<ObjectSource>;
  readonly subResource?: string;
  readonly resource?: GroupVersionResource;
  readonly kind?: GroupVersionKind;
  readonly requestName?: string;
  /** The case's own namespace: the request's; an object naming another is an input error, as in the API server. */
  readonly namespace?: string;
  /** A namespace from defaults: used only when the object names none. */
  readonly defaultNamespace?: string;
  readonly userInfo?: UserInfo;
  readonly dryRun?: boolean;
  /** false: the objects are evaluated as written, without the API server's defaults. */
  readonly defaulting?: boolean;
}

/**
 * A case given as a saved AdmissionReview (`reviewFile`): its request is evaluated as it is, as
 * `serve` would, with the request's own namespace, user, operation, objects, dryRun and options.
 */
export interface ReviewCase extends CaseCommon {
  readonly review: At<FileRef>;
}

export type SuiteCase = ObjectCase | ReviewCase;

export interface Suite {
  readonly file: string;
  readonly name: string;
  readonly policies: readonly At<FileRef>[];
  readonly resources: readonly At<FileRef>[];
  readonly authorizer: readonly AuthorizerRule[];
  readonly cases: readonly SuiteCase[];
  /** Where a field path of this suite file is (for problems found after parsing). */
  locate(path: string): SourceLocation;
}
