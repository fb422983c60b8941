/**
 * The admission request, as every stage after the policy reader sees it: admission.k8s.io/v1
 * AdmissionRequest (v1beta1 has the same shape), with its kinds, resources and user. It sits below
 * `match/` and `engine/` so that both read it without importing each other, and it holds the one
 * definition of the constants every reader of requests shares.
 */
import { OPERATIONS, type Operation } from "../policy/types.ts";

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

type JsonObject = Readonly<Record<string, unknown>>;

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  readonly requestKind?: GroupVersionKind;
  readonly requestResource?: GroupVersionResource;
  readonly requestSubResource?: string;
  readonly name: string;
  readonly namespace: string;
  readonly operation: Operation;
  readonly userInfo: UserInfo;
  /** `null` when absent (DELETE has no object; CREATE has no oldObject). */
  readonly object: JsonObject | null;
  readonly oldObject: JsonObject | null;
  readonly dryRun: boolean;
  readonly options: JsonObject | null;
}

/** The operations an admission request can carry, in the order messages list them. */
export { OPERATIONS };

export function isOperation(value: unknown): value is Operation {
  return typeof value === "string" && (OPERATIONS as readonly string[]).includes(value);
}

/** The user of an offline request that names none (`eval`, `test`, `repl`). */
export const DEFAULT_USER: UserInfo = Object.freeze({
  username: "celgate",
  groups: Object.freeze(["system:authenticated"]),
});
