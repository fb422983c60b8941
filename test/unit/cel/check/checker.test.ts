/**
 * The type checker against cel-go's own expectations: cases ported from cel-go's
 * checker/checker_test.go (testCases), each with its environment, expected type, checked AST in
 * cel-go's debug format (compared without whitespace, as its test.Compare does), or errors with
 * their positions.
 *
 * Adapted where our environment differs: Kubernetes uses no container, so `TestAllTypes{...}` cases
 * declare the message under its short name (the expected type names follow); cases that need
 * protobuf well-known type literals, enums, a container or a leading-dot name are left out, and
 * comprehensions are compared by type, not printed (our macros expand to a different tree).
 */
import {
  type Case,
  DEFAULT_FUNCTIONS,
  DEFAULT_IDENTS,
  fn,
  global,
  member,
  runCases,
  type TestEnvOptions,
} from "./helpers.ts";

const P3 = "google.expr.proto3.test.TestAllTypes";
const P2 = "google.expr.proto2.test.TestAllTypes";
const DEFAULT: TestEnvOptions = { idents: DEFAULT_IDENTS, functions: DEFAULT_FUNCTIONS };
const X3: TestEnvOptions = { idents: { x: P3 } };

const CASES: readonly Case[] = [
  // Const types
  { in: `"A"`, type: "string", out: `"A"~string` },
  { in: `12`, type: "int", out: `12~int` },
  { in: `12u`, type: "uint", out: `12u~uint` },
  { in: `true`, type: "bool", out: `true~bool` },
  { in: `false`, type: "bool", out: `false~bool` },
  { in: `12.23`, type: "double", out: `12.23~double` },
  { in: `null`, type: "null", out: `null~null` },
  { in: `b"ABC"`, type: "bytes", out: `b"ABC"~bytes` },
  // Ident types
  { in: `is`, env: DEFAULT, type: "string", out: `is~string^is` },
  { in: `ii`, env: DEFAULT, type: "int", out: `ii~int^ii` },
  { in: `iu`, env: DEFAULT, type: "uint", out: `iu~uint^iu` },
  { in: `iz`, env: DEFAULT, type: "bool", out: `iz~bool^iz` },
  { in: `id`, env: DEFAULT, type: "double", out: `id~double^id` },
  { in: `ix`, env: DEFAULT, type: "null", out: `ix~null^ix` },
  { in: `ib`, env: DEFAULT, type: "bytes", out: `ib~bytes^ib` },
  { in: `[]`, type: "list(dyn)", out: `[]~list(dyn)` },
  { in: `[1]`, type: "list(int)", out: `[1~int]~list(int)` },
  { in: `[1, "A"]`, type: "list(dyn)", out: `[1~int, "A"~string]~list(dyn)` },
  { in: `foo`, err: `ERROR: <input>:1:1: undeclared reference to 'foo' (in container '') | foo | ^` },
  // Call resolution
  { in: `fg_s()`, env: DEFAULT, type: "string", out: `fg_s()~string^fg_s_0` },
  { in: `is.fi_s_s()`, env: DEFAULT, type: "string", out: `is~string^is.fi_s_s()~string^fi_s_s_0` },
  { in: `1 + 2`, env: DEFAULT, type: "int", out: `_+_(1~int, 2~int)~int^add_int64` },
  { in: `1 + ii`, env: DEFAULT, type: "int", out: `_+_(1~int, ii~int^ii)~int^add_int64` },
  {
    in: `[1] + [2]`,
    env: DEFAULT,
    type: "list(int)",
    out: `_+_([1~int]~list(int), [2~int]~list(int))~list(int)^add_list`,
  },
  {
    in: `[] + [1,2,3,] + [4]`,
    type: "list(int)",
    out: `_+_(_+_([]~list(int), [1~int, 2~int, 3~int]~list(int))~list(int)^add_list, [4~int]~list(int))~list(int)^add_list`,
  },
  {
    in: `[1, 2u] + []`,
    type: "list(dyn)",
    out: `_+_([1~int, 2u~uint]~list(dyn), []~list(dyn))~list(dyn)^add_list`,
  },
  { in: `{1:2u, 2:3u}`, type: "map(int, uint)", out: `{1~int : 2u~uint, 2~int : 3u~uint}~map(int, uint)` },
  {
    in: `{"a":1, "b":2}.a`,
    type: "int",
    out: `{"a"~string : 1~int, "b"~string : 2~int}~map(string, int).a~int`,
  },
  { in: `{1:2u, 2u:3}`, type: "map(dyn, dyn)", out: `{1~int : 2u~uint, 2u~uint : 3~int}~map(dyn, dyn)` },
  {
    in: `TestAllTypes{single_int32: 1, single_int64: 2}`,
    env: { aliases: { TestAllTypes: P3 } },
    type: "TestAllTypes",
    out: `TestAllTypes{single_int32 : 1~int, single_int64 : 2~int}~TestAllTypes^TestAllTypes`,
  },
  {
    in: `TestAllTypes{single_int32: 1u}`,

    env: { aliases: { TestAllTypes: P3 } },
    err: `ERROR: <input>:1:26: expected type of field 'single_int32' is 'int' but provided type is 'uint'
      | TestAllTypes{single_int32: 1u}
      | .........................^`,
  },
  {
    in: `TestAllTypes{single_int32: 1, undefined: 2}`,

    env: { aliases: { TestAllTypes: P3 } },
    err: `ERROR: <input>:1:40: undefined field 'undefined'
      | TestAllTypes{single_int32: 1, undefined: 2}
      | .......................................^`,
  },
  {
    in: `size(x) == x.size()`,
    env: { idents: { x: "list(int)" } },
    type: "bool",
    out: `_==_(size(x~list(int)^x)~int^size_list, x~list(int)^x.size()~int^list_size)~bool^equals`,
  },
  {
    in: `int(1u) + int(uint("1"))`,
    type: "int",
    out: `_+_(int(1u~uint)~int^uint64_to_int64, int(uint("1"~string)~uint^string_to_uint64)~int^uint64_to_int64)~int^add_int64`,
  },
  {
    in: `false && !true || false ? 2 : 3`,
    type: "int",
    out: `_?_:_(_||_(_&&_(false~bool, !_(true~bool)~bool^logical_not)~bool^logical_and, false~bool)~bool^logical_or, 2~int, 3~int)~int^conditional`,
  },
  { in: `b"abc" + b"def"`, type: "bytes", out: `_+_(b"abc"~bytes, b"def"~bytes)~bytes^add_bytes` },
  {
    in: `1.0 + 2.0 * 3.0 - 1.0 / 2.20202 != 66.6`,
    type: "bool",
    out: `_!=_(_-_(_+_(1~double, _*_(2~double, 3~double)~double^multiply_double)~double^add_double, _/_(1~double, 2.20202~double)~double^divide_double)~double^subtract_double, 66.6~double)~bool^not_equals`,
  },
  {
    in: `null == null && null != null`,
    type: "bool",
    out: `_&&_(_==_(null~null, null~null)~bool^equals, _!=_(null~null, null~null)~bool^not_equals)~bool^logical_and`,
  },
  {
    in: `1 == 1 && 2 != 1`,
    type: "bool",
    out: `_&&_(_==_(1~int, 1~int)~bool^equals, _!=_(2~int, 1~int)~bool^not_equals)~bool^logical_and`,
  },
  {
    in: `1 + 2 * 3 - 1 / 2 == 6 % 1`,
    type: "bool",
    out: `_==_(_-_(_+_(1~int, _*_(2~int, 3~int)~int^multiply_int64)~int^add_int64, _/_(1~int, 2~int)~int^divide_int64)~int^subtract_int64, _%_(6~int, 1~int)~int^modulo_int64)~bool^equals`,
  },
  { in: `"abc" + "def"`, type: "string", out: `_+_("abc"~string, "def"~string)~string^add_string` },
  {
    in: `1u + 2u * 3u - 1u / 2u == 6u % 1u`,
    type: "bool",
    out: `_==_(_-_(_+_(1u~uint, _*_(2u~uint, 3u~uint)~uint^multiply_uint64)~uint^add_uint64, _/_(1u~uint, 2u~uint)~uint^divide_uint64)~uint^subtract_uint64, _%_(6u~uint, 1u~uint)~uint^modulo_uint64)~bool^equals`,
  },
  {
    in: `x.single_int32 != null`,
    env: { idents: { x: "google.expr.proto3.test.Proto2Message" } },
    err: `ERROR: <input>:1:2: unexpected failed resolution of 'google.expr.proto3.test.Proto2Message'
      | x.single_int32 != null
      | .^`,
  },
  {
    in: `x.single_value + 1 / x.single_struct.y == 23`,
    env: X3,
    type: "bool",
    out: `_==_(_+_(x~${P3}^x.single_value~dyn, _/_(1~int, x~${P3}^x.single_struct~map(string, dyn).y~dyn)~int^divide_int64)~int^add_int64, 23~int)~bool^equals`,
  },
  {
    in: `x.single_value[23] + x.single_struct['y']`,
    env: X3,
    type: "dyn",
    out: `_+_(_[_](x~${P3}^x.single_value~dyn, 23~int)~dyn^index_list|index_map, _[_](x~${P3}^x.single_struct~map(string, dyn), "y"~string)~dyn^index_map)~dyn^add_bytes|add_double|add_duration_duration|add_duration_timestamp|add_int64|add_list|add_string|add_timestamp_duration|add_uint64`,
  },
  {
    in: `size([] + [1])`,
    env: X3,
    type: "int",
    out: `size(_+_([]~list(int), [1~int]~list(int))~list(int)^add_list)~int^size_list`,
  },
  {
    in: `x["claims"]["groups"][0].name == "dummy"
		&& x.claims["exp"] == y[1].time
		&& x.claims.structured == {'key': z}
		&& z == 1.0`,
    env: {
      idents: { x: "google.protobuf.Struct", y: "google.protobuf.ListValue", z: "google.protobuf.Value" },
    },
    type: "bool",
    out: `_&&_(_&&_(_==_(_[_](_[_](_[_](x~map(string, dyn)^x, "claims"~string)~dyn^index_map, "groups"~string)~list(dyn)^index_map, 0~int)~dyn^index_list.name~dyn, "dummy"~string)~bool^equals, _==_(_[_](x~map(string, dyn)^x.claims~dyn, "exp"~string)~dyn^index_map, _[_](y~list(dyn)^y, 1~int)~dyn^index_list.time~dyn)~bool^equals)~bool^logical_and, _&&_(_==_(x~map(string, dyn)^x.claims~dyn.structured~dyn, {"key"~string:z~dyn^z}~map(string, dyn))~bool^equals, _==_(z~dyn^z, 1~double)~bool^equals)~bool^logical_and)~bool^logical_and`,
  },
  {
    in: `x + y`,
    env: { idents: { x: `list(${P3})`, y: "list(int)" } },
    err: `ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(list(${P3}), list(int))'
      | x + y
      | ..^`,
  },
  {
    in: `x[1u]`,
    env: { idents: { x: `list(${P3})` } },
    err: `ERROR: <input>:1:2: found no matching overload for '_[_]' applied to '(list(${P3}), uint)'
      | x[1u]
      | .^`,
  },
  {
    in: `(x + x)[1].single_int32 == size(x)`,
    env: { idents: { x: `list(${P3})` } },
    type: "bool",
    out: `_==_(_[_](_+_(x~list(${P3})^x, x~list(${P3})^x)~list(${P3})^add_list, 1~int)~${P3}^index_list.single_int32~int, size(x~list(${P3})^x)~int^size_list)~bool^equals`,
  },
  {
    in: `x.repeated_int64[x.single_int32] == 23`,
    env: X3,
    type: "bool",
    out: `_==_(_[_](x~${P3}^x.repeated_int64~list(int), x~${P3}^x.single_int32~int)~int^index_list, 23~int)~bool^equals`,
  },
  {
    in: `size(x.map_int64_nested_type) == 0`,
    env: X3,
    type: "bool",
    out: `_==_(size(x~${P3}^x.map_int64_nested_type~map(int, google.expr.proto3.test.NestedTestAllTypes))~int^size_map, 0~int)~bool^equals`,
  },
  {
    in: `x.all(y, y == true)`,
    env: { idents: { x: "bool" } },
    err: `ERROR: <input>:1:1: expression of type 'bool' cannot be range of a comprehension (must be list, map, or dynamic)
      | x.all(y, y == true)
      | ^`,
  },
  { in: `x.repeated_int64.map(x, double(x))`, env: X3, type: "list(double)" },
  { in: `x.repeated_int64.map(x, x > 0, double(x))`, env: X3, type: "list(double)" },
  {
    in: `x[2].single_int32 == 23`,
    env: { idents: { x: `map(string, ${P3})` } },
    err: `ERROR: <input>:1:2: found no matching overload for '_[_]' applied to '(map(string, ${P3}), int)'
      | x[2].single_int32 == 23
      | .^`,
  },
  {
    in: `x["a"].single_int32 == 23`,
    env: { idents: { x: `map(string, ${P3})` } },
    type: "bool",
    out: `_==_(_[_](x~map(string, ${P3})^x, "a"~string)~${P3}^index_map.single_int32~int, 23~int)~bool^equals`,
  },
  {
    in: `x.single_nested_message.bb == 43 && has(x.single_nested_message)`,
    env: X3,
    type: "bool",
    out: `_&&_(_==_(x~${P3}^x.single_nested_message~${P3}.NestedMessage.bb~int, 43~int)~bool^equals, x~${P3}^x.single_nested_message~test-only~~bool)~bool^logical_and`,
  },
  {
    in: `x.single_nested_message.undefined == x.undefined && has(x.single_int32) && has(x.repeated_int32)`,
    env: X3,
    err: `ERROR: <input>:1:24: undefined field 'undefined'
      | x.single_nested_message.undefined == x.undefined && has(x.single_int32) && has(x.repeated_int32)
      | .......................^
      ERROR: <input>:1:39: undefined field 'undefined'
      | x.single_nested_message.undefined == x.undefined && has(x.single_int32) && has(x.repeated_int32)
      | ......................................^`,
  },
  {
    in: `x.single_nested_message != null`,
    env: X3,
    type: "bool",
    out: `_!=_(x~${P3}^x.single_nested_message~${P3}.NestedMessage, null~null)~bool^not_equals`,
  },
  {
    in: `x.single_int64 != null`,
    env: X3,
    err: `ERROR: <input>:1:16: found no matching overload for '_!=_' applied to '(int, null)'
      | x.single_int64 != null
      | ...............^`,
  },
  {
    in: `x.single_int64_wrapper == null`,
    env: X3,
    type: "bool",
    out: `_==_(x~${P3}^x.single_int64_wrapper~wrapper(int), null~null)~bool^equals`,
  },
  {
    in: `x.single_bool_wrapper
		&& x.single_bytes_wrapper == b'hi'
		&& x.single_double_wrapper != 2.0
		&& x.single_float_wrapper == 1.0
		&& x.single_int32_wrapper != 2
		&& x.single_int64_wrapper == 1
		&& x.single_string_wrapper == 'hi'
		&& x.single_uint32_wrapper == 1u
		&& x.single_uint64_wrapper != 42u`,
    env: X3,
    type: "bool",
  },
  {
    in: `x.repeated_int64.exists(y, y > 10) && y < 5`,
    env: X3,
    err: `ERROR: <input>:1:39: undeclared reference to 'y' (in container '')
      | x.repeated_int64.exists(y, y > 10) && y < 5
      | ......................................^`,
  },
  {
    in: `x.repeated_int64.all(e, e > 0) && x.repeated_int64.exists(e, e < 0) && x.repeated_int64.exists_one(e, e == 0)`,
    env: X3,
    type: "bool",
  },
  {
    in: `x.all(e, 0)`,
    env: X3,
    err: `ERROR: <input>:1:1: expression of type '${P3}' cannot be range of a comprehension (must be list, map, or dynamic)
      | x.all(e, 0)
      | ^
      ERROR: <input>:1:10: expected type 'bool' but found 'int'
      | x.all(e, 0)
      | .........^`,
  },
  { in: `lists.filter(x, x > 1.5)`, env: { idents: { lists: "dyn" } }, type: "list(dyn)" },
  { in: `1 + x`, err: `ERROR: <input>:1:5: undeclared reference to 'x' (in container '') | 1 + x | ....^` },
  {
    in: `list == type([1]) && map == type({1:2u})`,
    type: "bool",
    out: `_&&_(_==_(list~type(list(dyn))^list, type([1~int]~list(int))~type(list(int))^type)~bool^equals, _==_(map~type(map(dyn, dyn))^map, type({1~int : 2u~uint}~map(int, uint))~type(map(int, uint))^type)~bool^equals)~bool^logical_and`,
  },
  {
    in: `myfun(1, true, 3u) + 1.myfun(false, 3u).myfun(true, 42u)`,
    env: {
      functions: [
        fn(
          "myfun",
          member("myfun_instance", "int.(bool, uint) -> int"),
          global("myfun_static", "(int, bool, uint) -> int"),
        ),
      ],
    },
    type: "int",
    out: `_+_(myfun(1~int, true~bool, 3u~uint)~int^myfun_static, 1~int.myfun(false~bool, 3u~uint)~int^myfun_instance.myfun(true~bool, 42u~uint)~int^myfun_instance)~int^add_int64`,
  },
  {
    in: `size(x) > 4`,
    env: { idents: { x: P3 }, functions: [fn("size", global("size_message", `(${P3}) -> int`))] },
    type: "bool",
  },
  {
    in: `x.single_int64_wrapper + 1 != 23`,
    env: X3,
    type: "bool",
    out: `_!=_(_+_(x~${P3}^x.single_int64_wrapper~wrapper(int), 1~int)~int^add_int64, 23~int)~bool^not_equals`,
  },
  {
    in: `x.single_int64_wrapper + y != 23`,
    env: { idents: { x: P3, y: "google.protobuf.Int32Value" } },
    type: "bool",
    out: `_!=_(_+_(x~${P3}^x.single_int64_wrapper~wrapper(int), y~wrapper(int)^y)~int^add_int64, 23~int)~bool^not_equals`,
  },
  { in: `1 in [1, 2, 3]`, type: "bool", out: `@in(1~int, [1~int, 2~int, 3~int]~list(int))~bool^in_list` },
  {
    in: `1 in dyn([1, 2, 3])`,
    type: "bool",
    out: `@in(1~int, dyn([1~int, 2~int, 3~int]~list(int))~dyn^to_dyn)~bool^in_list|in_map`,
  },
  {
    in: `type(null) == null_type`,
    type: "bool",
    out: `_==_(type(null~null)~type(null)^type, null_type~type(null)^null_type)~bool^equals`,
  },
  {
    in: `type(type) == type`,
    type: "bool",
    out: `_==_(type(type~type(type)^type)~type(type(type))^type, type~type(type)^type)~bool^equals`,
  },
  { in: `([[[1]], [[2]], [[3]]][0][0] + [2, 3, {'four': {'five': 'six'}}])[3]`, type: "dyn" },
  {
    in: `[1] + [dyn('string')]`,
    type: "list(dyn)",
    out: `_+_([1~int]~list(int), [dyn("string"~string)~dyn^to_dyn]~list(dyn))~list(dyn)^add_list`,
  },
  {
    in: `[dyn('string')] + [1]`,
    type: "list(dyn)",
    out: `_+_([dyn("string"~string)~dyn^to_dyn]~list(dyn), [1~int]~list(int))~list(dyn)^add_list`,
  },
  {
    in: `[].map(x, [].map(y, x in y && y in x))`,

    err: `ERROR: <input>:1:33: found no matching overload for '@in' applied to '(list(dyn), dyn)'
      | [].map(x, [].map(y, x in y && y in x))
      | ................................^`,
  },
  {
    in: `args.user["myextension"].customAttributes.filter(x, x.name == "hobbies")`,
    env: { idents: { args: "map(string, dyn)" } },
    type: "list(dyn)",
  },
  {
    in: `a.b + 1 == a[0]`,
    env: { idents: { a: "T" } },
    type: "bool",
    out: `_==_(_+_(a~dyn^a.b~dyn, 1~int)~int^add_int64, _[_](a~dyn^a, 0~int)~dyn^index_list|index_map)~bool^equals`,
  },
  {
    in: `!has(pb2.single_int64)
		&& !has(pb2.repeated_int32)
		&& !has(pb2.map_string_string)
		&& !has(pb3.single_int64)
		&& !has(pb3.repeated_int32)
		&& !has(pb3.map_string_string)`,
    env: { idents: { pb2: P2, pb3: P3 } },
    type: "bool",
  },
  {
    in: `TestAllTypes{}.repeated_nested_message`,
    env: { aliases: { TestAllTypes: P2 } },
    type: `list(${P2}.NestedMessage)`,
  },
  {
    in: `TestAllTypes{}.repeated_nested_message`,
    env: { aliases: { TestAllTypes: P3 } },
    type: `list(${P3}.NestedMessage)`,
  },
  {
    in: `base64.encode('hello')`,
    env: { functions: [fn("base64.encode", global("base64_encode_string", "(string) -> string"))] },
    type: "string",
  },
  { in: `{}`, type: "map(dyn, dyn)", out: `{}~map(dyn, dyn)` },
  {
    in: `set([1, 2, 3])`,
    env: { functions: [fn("set", global("set_list", "(list(T)) -> set(T)"))] },
    type: "set(int)",
  },
  {
    in: `set([1, 2]) == set([2, 1])`,
    env: { functions: [fn("set", global("set_list", "(list(T)) -> set(T)"))] },
    type: "bool",
  },
  {
    in: `set([1, 2]) == x`,
    env: { idents: { x: "set(T)" }, functions: [fn("set", global("set_list", "(list(T)) -> set(T)"))] },
    type: "bool",
  },
  {
    in: `int{}`,

    err: `ERROR: <input>:1:4: 'int' is not a message type | int{} | ...^`,
  },
  {
    in: `Msg{}`,

    err: `ERROR: <input>:1:4: undeclared reference to 'Msg' (in container '') | Msg{} | ...^`,
  },
  {
    in: `fun()`,

    err: `ERROR: <input>:1:4: undeclared reference to 'fun' (in container '') | fun() | ...^`,
  },
  {
    in: `'string'.fun()`,

    err: `ERROR: <input>:1:13: undeclared reference to 'fun' (in container '') | 'string'.fun() | ............^`,
  },
  {
    in: `[].length`,
    err: `ERROR: <input>:1:3: type 'list(_var0)' does not support field selection | [].length | ..^`,
  },
  {
    in: `1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1`,
    env: { crossTypeNumericComparisons: false },
    err: `ERROR: <input>:1:3: found no matching overload for '_<=_' applied to '(int, double)'
      | 1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1
      | ..^
      ERROR: <input>:1:16: found no matching overload for '_<=_' applied to '(uint, double)'
      | 1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1
      | ...............^
      ERROR: <input>:1:30: found no matching overload for '_<=_' applied to '(double, int)'
      | 1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1
      | .............................^
      ERROR: <input>:1:42: found no matching overload for '_<=_' applied to '(double, uint)'
      | 1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1
      | .........................................^
      ERROR: <input>:1:53: found no matching overload for '_<=_' applied to '(int, uint)'
      | 1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1
      | ....................................................^
      ERROR: <input>:1:65: found no matching overload for '_<=_' applied to '(uint, int)'
      | 1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1
      | ................................................................^`,
  },
  {
    in: `1 <= 1.0 && 1u <= 1.0 && 1.0 <= 1 && 1.0 <= 1u && 1 <= 1u && 1u <= 1`,
    type: "bool",
    out: `_&&_(_&&_(_&&_(_<=_(1~int, 1~double)~bool^less_equals_int64_double, _<=_(1u~uint, 1~double)~bool^less_equals_uint64_double)~bool^logical_and, _<=_(1~double, 1~int)~bool^less_equals_double_int64)~bool^logical_and, _&&_(_&&_(_<=_(1~double, 1u~uint)~bool^less_equals_double_uint64, _<=_(1~int, 1u~uint)~bool^less_equals_int64_uint64)~bool^logical_and, _<=_(1u~uint, 1~int)~bool^less_equals_uint64_int64)~bool^logical_and)~bool^logical_and`,
  },
  { in: `1 < 1.0 && 1u < 1.0 && 1.0 < 1 && 1.0 < 1u && 1 < 1u && 1u < 1`, type: "bool" },
  { in: `1 > 1.0 && 1u > 1.0 && 1.0 > 1 && 1.0 > 1u && 1 > 1u && 1u > 1`, type: "bool" },
  { in: `1 >= 1.0 && 1u >= 1.0 && 1.0 >= 1 && 1.0 >= 1u && 1 >= 1u && 1u >= 1`, type: "bool" },
  { in: `[1].map(x, [x, x]).map(x, [x, x])`, type: "list(list(list(int)))" },
  {
    in: `values.filter(i, i.content != "").map(i, i.content)`,
    env: { idents: { values: "list(map(string, string))" } },
    type: "list(string)",
  },
  { in: `[{}.map(c,c,c)]+[{}.map(c,c,c)]`, type: "list(list(bool))" },
  {
    in: "type(testAllTypes.nestedgroup.nested_id) == int",
    env: { idents: { testAllTypes: P2 } },
    type: "bool",
    out: `_==_(type(testAllTypes~${P2}^testAllTypes.nestedgroup~${P2}.NestedGroup.nested_id~int)~type(int)^type, int~type(int)^int)~bool^equals`,
  },
  { in: `undef`, err: `ERROR: <input>:1:1: undeclared reference to 'undef' (in container '') | undef | ^` },
  {
    in: `undef()`,

    err: `ERROR: <input>:1:6: undeclared reference to 'undef' (in container '') | undef() | .....^`,
  },
  {
    in: `null_int == null || null == null_int || null_msg == null || null == null_msg`,
    env: { idents: { null_int: "google.protobuf.Int64Value", null_msg: P2 } },
    type: "bool",
  },
  {
    in: `NotAMessage{}`,

    env: { idents: { NotAMessage: "google.protobuf.Int64Value" } },
    err: `ERROR: <input>:1:12: undeclared reference to 'NotAMessage' (in container '') | NotAMessage{} | ...........^`,
  },
  { in: `{}.map(c,[c,type(c)])`, type: "list(list(dyn))" },
  {
    in: `[{'y': 0}].exists(x, x.y == 0)`,
    env: { idents: { x: "map(string, int)" } },
    type: "bool",
  },
];

runCases("cel-go checker_test.go", CASES);
