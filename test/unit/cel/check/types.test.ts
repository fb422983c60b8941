/**
 * Checker types against cel-go's: common/types/types_test.go (String, IsExactType,
 * IsEquivalentType, IsAssignableType) and checker/format_test.go (FormatCELType), plus the
 * unification rules of checker/types.go the checker tests exercise only through expressions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ANY,
  BOOL,
  BYTES,
  type CelType,
  DOUBLE,
  DURATION,
  DYN,
  ERROR,
  formatType,
  INT,
  isAssignableType,
  isEquivalentType,
  isExactType,
  listOf,
  mapOf,
  NULL,
  objectType,
  opaque,
  optionalOf,
  STRING,
  TIMESTAMP,
  TYPE,
  typeOf,
  typeParam,
  typeString,
  UINT,
  wrapperOf,
} from "../../../../src/cel/check/types.ts";
import { isAssignable, Mapping, substitute } from "../../../../src/cel/check/unify.ts";

test("cel-go types_test.go TestTypeString", () => {
  const cases: [CelType, string][] = [
    [listOf(INT), "list(int)"],
    [mapOf(UINT, DOUBLE), "map(uint, double)"],
    [BOOL, "bool"],
    [DYN, "dyn"],
    [NULL, "null_type"],
    [wrapperOf(BOOL), "wrapper(bool)"],
    [optionalOf(listOf(STRING)), "optional_type(list(string))"],
    [objectType("my.type.Message"), "my.type.Message"],
    [objectType("google.protobuf.Int32Value"), "wrapper(int)"],
    [objectType("google.protobuf.UInt32Value"), "wrapper(uint)"],
    [objectType("google.protobuf.Value"), "dyn"],
    [typeOf(STRING), "type(string)"],
    [typeParam("T"), "<T>"],
    [listOf(DYN), "list(dyn)"],
    [mapOf(DYN, DYN), "map(dyn, dyn)"],
  ];
  for (const [t, want] of cases) assert.equal(typeString(t), want);
});

test("cel-go format_test.go: FormatCELType spells types as the checker's messages do", () => {
  const cases: [CelType, string][] = [
    [ANY, "any"],
    [BOOL, "bool"],
    [BYTES, "bytes"],
    [DOUBLE, "double"],
    [DURATION, "duration"],
    [DYN, "dyn"],
    [ERROR, "!error!"],
    [INT, "int"],
    [listOf(STRING), "list(string)"],
    [mapOf(INT, DYN), "map(int, dyn)"],
    [objectType("dev.cel.Expr"), "dev.cel.Expr"],
    [optionalOf(BOOL), "optional_type(bool)"],
    [wrapperOf(INT), "wrapper(int)"],
    [typeParam("T"), "T"],
    [typeOf(listOf(INT)), "type(list(int))"],
    [NULL, "null"],
    [STRING, "string"],
    [TIMESTAMP, "timestamp"],
    [TYPE, "type"],
    [UINT, "uint"],
  ];
  for (const [t, want] of cases) assert.equal(formatType(t), want);
});

test("cel-go types_test.go TestTypeIsExactType", () => {
  const T = typeParam;
  assert.equal(isExactType(STRING, STRING), true);
  assert.equal(isExactType(STRING, INT), false);
  assert.equal(isExactType(optionalOf(STRING), optionalOf(INT)), false);
  assert.equal(isExactType(optionalOf(UINT), optionalOf(UINT)), true);
  assert.equal(isExactType(optionalOf(T("T")), optionalOf(T("T"))), true);
  assert.equal(isExactType(mapOf(BOOL, INT), mapOf(BOOL, INT)), true);
  assert.equal(isExactType(mapOf(T("K1"), INT), mapOf(T("K2"), INT)), false);
  assert.equal(
    isExactType(mapOf(T("K1"), objectType("my.msg.First")), mapOf(T("K2"), objectType("my.msg.Last"))),
    false,
  );
});

test("cel-go types_test.go TestTypeIsEquivalentType", () => {
  const T = typeParam;
  assert.equal(isEquivalentType(STRING, STRING), true);
  assert.equal(isEquivalentType(STRING, INT), false);
  assert.equal(isEquivalentType(optionalOf(STRING), optionalOf(INT)), false);
  assert.equal(isEquivalentType(optionalOf(UINT), optionalOf(UINT)), true);
  assert.equal(isEquivalentType(mapOf(BOOL, INT), mapOf(BOOL, INT)), true);
  assert.equal(isEquivalentType(mapOf(T("K1"), INT), mapOf(T("K2"), INT)), true);
  assert.equal(
    isEquivalentType(mapOf(T("K1"), objectType("my.msg.First")), mapOf(T("K2"), objectType("my.msg.Last"))),
    false,
  );
});

test("cel-go types_test.go TestTypeIsAssignableType", () => {
  const vector = (t: CelType) => opaque("vector", t);
  const cases: [CelType, CelType, boolean][] = [
    [wrapperOf(DOUBLE), NULL, true],
    [wrapperOf(DOUBLE), DOUBLE, true],
    [vector(wrapperOf(DOUBLE)), vector(NULL), true],
    [vector(wrapperOf(DOUBLE)), vector(DOUBLE), true],
    [vector(DYN), vector(wrapperOf(INT)), true],
    [objectType("my.msg.MsgName"), objectType("my.msg.MsgName"), true],
    [mapOf(typeParam("K"), INT), mapOf(STRING, INT), true],
    [mapOf(STRING, INT), mapOf(typeParam("K"), INT), false],
    [vector(DOUBLE), vector(wrapperOf(INT)), false],
    [vector(wrapperOf(DOUBLE)), vector(DYN), false],
    [objectType("my.msg.MsgName"), objectType("my.msg.MsgName2"), false],
  ];
  for (const [t1, t2, want] of cases)
    assert.equal(isAssignableType(t1, t2), want, `${typeString(t1)} ← ${typeString(t2)}`);
});

test("checker/types.go: assignability binds type parameters, and a failed test leaves no binding behind", () => {
  const m = new Mapping();
  const a = typeParam("_var0");
  assert.equal(isAssignable(m, listOf(INT), listOf(a)), true);
  assert.equal(formatType(substitute(m, a, false)), "int");
  // _var0 is int now: a list(string) no longer fits, and trying does not change the binding.
  assert.equal(isAssignable(m, listOf(STRING), listOf(a)), false);
  assert.equal(formatType(substitute(m, mapOf(a, typeParam("_var1")), true)), "map(int, dyn)");
  // dyn fits anything, both ways; null fits messages, optionals, timestamps and wrappers, not ints.
  assert.equal(isAssignable(m, DYN, INT) && isAssignable(m, INT, DYN), true);
  assert.equal(isAssignable(m, NULL, objectType("a.B")) && isAssignable(m, NULL, TIMESTAMP), true);
  assert.equal(isAssignable(m, NULL, wrapperOf(INT)), true);
  assert.equal(isAssignable(m, NULL, INT), false);
  // Any two type types are assignable (TypeKind).
  assert.equal(isAssignable(m, typeOf(INT), typeOf(listOf(STRING))), true);
});

test("checker/types.go: the occurs check keeps a parameter from standing for a type that contains it", () => {
  const m = new Mapping();
  const a = typeParam("_var0");
  assert.equal(isAssignable(m, listOf(a), a), false);
  assert.equal(substitute(m, a, false), a);
});
