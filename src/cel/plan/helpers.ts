/**
 * The run-time helpers generated code calls, by the names it writes (through `Gen.h`, which this
 * table types). They all live below the planner (cel/runtime, cel/state): generated code needs
 * nothing of the planner itself at run time.
 */
import {
  ABSENT,
  asBool,
  hasField,
  indexOrError,
  indexValue,
  selectField,
  selectValue,
} from "../runtime/access.ts";
import { celEquals } from "../runtime/equality.ts";
import { errorAt, HeldError, rangeError, withPosition } from "../runtime/errors.ts";
import { hasTag } from "../runtime/tags.ts";
import {
  BuiltMap,
  CelError,
  CelMap,
  fromJson,
  isPlainMap,
  mapGet,
  mapKeys,
  newBuiltMap,
  noSuchOverload,
  noSuchOverloadBare,
  Optional,
  UInt,
} from "../runtime/values.ts";
import { MemoEntry } from "../state/activation.ts";
import type { Gen } from "./gen.ts";

export const HELPERS = {
  ABSENT,
  MemoEntry,
  asBool,
  BuiltMap,
  celEquals,
  CelError,
  CelMap,
  errorAt,
  fromJson,
  hasField,
  hasTag,
  hasOwn: Object.hasOwn,
  HeldError,
  indexOrError,
  indexValue,
  isPlainMap,
  mapGet,
  mapKeys,
  newBuiltMap,
  noSuchOverload,
  noSuchOverloadBare,
  Optional,
  // The Object constructor, under a name no generated code shadows: emitIsJsonMap tests it.
  PlainObject: Object,
  rangeError,
  UInt,
  selectField,
  selectValue,
  withPosition,
} as const;

/** A writer of generated code that may name the helpers above (and, for a sequence, more). */
export type PlanGen = Gen<typeof HELPERS>;

/** Writes one node's evaluation as statements; returns the name of the variable that holds its value. */
export type Emit = (g: PlanGen) => string;
