/**
 * Type tags: the types the flat checker and overload dispatch work with, and the run-time test of a
 * value against one. The generated form of the test is plan/dispatch.ts `emitTagCheck`.
 */
import {
  CelMap,
  CelObject,
  CelType,
  type CelValue,
  Duration,
  isPlainMap,
  Optional,
  Timestamp,
  UInt,
} from "./values.ts";

/**
 * A type as the checker and the dispatcher see it: a CEL type name (`int`, `uint`, `double`,
 * `string`, `bytes`, `bool`, `null_type`, `list`, `map`, `type`, `optional_type`,
 * `google.protobuf.Duration`, `google.protobuf.Timestamp`, or a library type such as
 * `kubernetes.Quantity`), or `dyn` for any value. Element types of lists and maps are not tracked.
 */
export type TypeTag = string;

/** Whether a run-time value has a type tag, for overload dispatch. */
export function hasTag(v: CelValue, tag: TypeTag): boolean {
  switch (tag) {
    case "dyn":
      return true;
    case "int":
      return typeof v === "bigint";
    case "double":
      return typeof v === "number";
    case "string":
      return typeof v === "string";
    case "bool":
      return typeof v === "boolean";
    case "null_type":
      return v === null;
    case "list":
      return Array.isArray(v);
    case "map":
      return v instanceof CelMap || isPlainMap(v);
    case "uint":
      return v instanceof UInt;
    case "bytes":
      return v instanceof Uint8Array;
    case "type":
      return v instanceof CelType;
    case "optional_type":
      return v instanceof Optional;
    case "google.protobuf.Duration":
      return v instanceof Duration;
    case "google.protobuf.Timestamp":
      return v instanceof Timestamp;
    default:
      return v instanceof CelObject && v.celType === tag;
  }
}
