import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { children, type Expr } from "../../../src/cel/syntax/ast.ts";
import { bufParserSource, CelSyntaxError, parseCel } from "../../../src/cel/syntax/parse.ts";
import { renderError } from "../../../src/cel/syntax/source.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

test("the parser comes from @bufbuild/cel's parse.js, not its entry point", () => {
  assert.equal(bufParserSource, "parse.js");
  const parsed = parseCel("object.spec.?replicas.orValue(1) > 0");
  assert.equal(parsed.root.kind, "call");
});

test("loading the CEL front end does not load @bufbuild/cel's evaluator and its registries", () => {
  // In a fresh process: which of the package's CommonJS modules did importing syntax/parse.ts load?
  const script = `
    import { createRequire } from "node:module";
    await import(${JSON.stringify(new URL("../../../src/cel/syntax/parse.ts", import.meta.url).href)});
    const require = createRequire(import.meta.url);
    const loaded = Object.keys(require.cache).filter((k) => k.includes("@bufbuild/cel/"));
    console.log(JSON.stringify(loaded.map((k) => k.slice(k.lastIndexOf("/") + 1)).sort()));
  `;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  const loaded = JSON.parse(out.trim().split("\n").at(-1) ?? "[]") as string[];
  assert.ok(loaded.includes("parse.js"), `loaded: ${loaded.join(", ")}`);
  for (const heavy of ["index.js", "plan.js", "registry.js"])
    assert.ok(!loaded.includes(heavy), `${heavy} was loaded: ${loaded.join(", ")}`);
});

/** The rendered parse error of `src` (cel-go's format), or undefined when it parses. */
function parseError(src: string): string | undefined {
  try {
    parseCel(src, { bind: true });
    return undefined;
  } catch (e) {
    if (e instanceof CelSyntaxError) return renderError(src, e.offset, e.message);
    throw e;
  }
}

/** Where each node of `src` is placed, as `kind:fn@offset`, outermost first. */
function placed(src: string): string[] {
  const p = parseCel(src);
  const out: string[] = [];
  const walk = (e: Expr): void => {
    const name = e.kind === "call" ? `:${e.fn}` : e.kind === "ident" ? `:${e.name}` : "";
    out.push(`${e.kind}${name}@${p.offsets.get(e.id)}`);
    if (e.kind === "map") for (const en of e.entries) out.push(`entry@${p.offsets.get(en.id)}`);
    if (e.kind === "struct") for (const f of e.fields) out.push(`field@${p.offsets.get(f.id)}`);
    for (const c of children(e)) walk(c.expr);
  };
  walk(p.root);
  return out;
}

test("cel-go parser.go: a call is placed at its `(` (VisitGlobalCall, VisitMemberCall)", () => {
  assert.deepEqual(placed("f(a)"), ["call:f@1", "ident:a@2"]);
  assert.deepEqual(placed("a.f (b)"), ["call:f@4", "ident:a@0", "ident:b@5"]);
  assert.deepEqual(placed("optional.of(1)")[0], "call:of@11");
});

test("cel-go parser.go: binary operators at the operator (VisitRelation, VisitCalc, VisitConditionalAnd)", () => {
  assert.deepEqual(placed("(a) && b")[0], "call:_&&_@4");
  assert.deepEqual(placed("x in [1]")[0], "call:@in@2");
  assert.deepEqual(placed("a>=-1")[0], "call:_>=_@1");
  assert.deepEqual(placed("f(x) + 1")[0], "call:_+_@5");
  assert.deepEqual(placed("1 - -5")[0], "call:_-_@2");
});

test("cel-go parser.go: the conditional at its `?`, a struct literal at its `{`, entries and fields at their `:`", () => {
  assert.deepEqual(placed("a ? (b) : c")[0], "call:_?_:_@2");
  assert.deepEqual(placed("Object.spec{a: 1}").slice(0, 2), ["struct@11", "field@13"]);
  assert.deepEqual(placed("{'k' : 1, 'j': 2}").slice(0, 3), ["map@0", "entry@5", "entry@13"]);
});

test("cel-go parser.go: a macro's nodes are placed at its call's `(`", () => {
  assert.deepEqual(placed("x.all(y, y)")[0], "comprehension@5");
  assert.deepEqual(placed("has(a.b)")[0], "select@3");
  assert.deepEqual(placed("m.transformMap(k, v, v)")[0], "comprehension@14");
});

test("an optional element after `in`: the `[` opens a list literal (CEL.g4: `in` is a relation)", () => {
  const p = parseCel("x in [?a, b]");
  const list = p.root.kind === "call" ? p.root.args[1] : undefined;
  assert.equal(list?.kind, "list");
  assert.deepEqual(list?.kind === "list" ? [...list.optionalIndices] : [], [0]);
});

test("optional map entries and struct fields keep their marks once placed at their `:`", () => {
  const p = parseCel("{?'k': a, 'j': b}");
  assert.deepEqual(p.root.kind === "map" ? p.root.entries.map((e) => e.optional) : [], [true, false]);
  const s = parseCel("Msg{?a: x, b: y}");
  assert.deepEqual(s.root.kind === "struct" ? s.root.fields.map((f) => f.optional) : [], [true, false]);
});

test("cel-go parser/macro.go makeHas: has() of anything but a field selection", () => {
  assert.equal(
    parseError("has(x)"),
    "ERROR: <input>:1:5: invalid argument to has() macro\n | has(x)\n | ....^",
  );
  assert.match(parseError("has(x[0])") ?? "", /1:6: invalid argument to has\(\) macro/);
  assert.equal(parseError("has(x.y)"), undefined);
});

test("cel-go macro errors: variables that are not simple names (parser/macro.go, ext/comprehensions.go, ext/bindings.go, cel/library.go)", () => {
  assert.match(parseError("[1].all(1, true)") ?? "", /1:9: argument must be a simple name/);
  assert.match(parseError("[1].map(1, 2)") ?? "", /1:9: argument is not an identifier/);
  assert.match(parseError("[1].all(x, 1, true)") ?? "", /1:12: argument must be a simple name/);
  assert.match(parseError("[1].all(x, x, true)") ?? "", /1:12: duplicate variable name: x/);
  assert.match(
    parseError("m.optMap(1, 2)") ?? "",
    /1:10: optMap\(\) variable name must be a simple identifier/,
  );
  assert.match(
    parseError("cel.bind(1, 2, 3)") ?? "",
    /1:10: cel.bind\(\) variable names must be simple identifiers/,
  );
  assert.match(parseError("[2, 1].sortBy(1, 2)") ?? "", /argument is not an identifier/);
  // ext/lists.go sortByMacro checks its target's kind before the arguments (found against the real
  // kube-apiserver 1.37.2 by test/kube/acceptance.test.ts), at the target.
  const target =
    /1:1: sortBy can only be applied to a list, identifier, comprehension, call or select expression/;
  assert.match(parseError("true.sortBy({'a': 1}, 1.5)") ?? "", target);
  assert.match(parseError("{'a': 1}.sortBy(x, x)") ?? "", target);
  assert.equal(parseError("[2, 1].map(y, y).sortBy(x, -x)"), undefined);
});

/**
 * The caret line under wide characters, tabs and long lines, as cel-go's common/error.go
 * ToDisplayString draws it. The first case is the real kube-apiserver 1.37.2's answer to a policy
 * variable with that expression (test/kube/acceptance.test.ts found celgate drew plain dots).
 */
void test("compile errors are drawn as cel-go draws them: full-width dots and caret under wide characters, tabs as spaces", () => {
  const src = "({1: {variables.s: 'ünï'}})[2.0]";
  assert.equal(
    renderError(src, src.indexOf("[2.0]"), "found no matching overload"),
    "ERROR: <input>:1:28: found no matching overload\n | ({1: {variables.s: 'ünï'}})[2.0]\n | ....................\uff0e.\uff0e....^",
  );
  assert.equal(renderError("'é' + 1", 1, "x"), "ERROR: <input>:1:2: x\n | 'é' + 1\n | .\uff3e");
  assert.equal(renderError("\ta +\t1", 5, "x"), "ERROR: <input>:1:6: x\n |  a + 1\n | .....^");
  const long = `${"a".repeat(16385)} + 1`;
  assert.equal(renderError(long, 16386, "x"), "ERROR: <input>:1:16387: x");
});

void test("a unary - or ! is placed at its operator, as cel-go's VisitNegate and VisitLogicalNot place it", () => {
  // kube-apiserver 1.37.2 puts the caret of `[1, -(-0.0)]`'s element type error under the `-`
  // (test/kube/acceptance.test.ts); @bufbuild/cel put the node on the space before it.
  assert.deepEqual(
    placed("[1, -x,  !y]").filter((p) => p.startsWith("call")),
    ["call:-_@4", "call:!_@9"],
  );
  assert.deepEqual(
    placed("[1,-x]").filter((p) => p.startsWith("call")),
    ["call:-_@3"],
  );
});
