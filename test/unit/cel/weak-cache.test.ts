/**
 * The compile caches hold what the serving set keeps, and no more (issue 37 item 5): a program
 * compiled again while the first is alive is the same program (a reload of unchanged files costs
 * nothing), and one nothing else holds is collected (a set a reload replaced leaves no copy in a
 * cache); environments are shared by configuration, so programs do not each carry a function table.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ADMISSION_VARIABLES, compile, createEnvironment, type Program } from "../../../src/cel/index.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A full collection on a turn of its own: a WeakRef's target lives until the turn ends. */
async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
}

const env = () => createEnvironment({ variables: { ...ADMISSION_VARIABLES }, extras: {} });

function program(source: string): Program {
  const r = compile(source, env());
  assert.ok(r.ok);
  return r.program;
}

void test("an environment is built once per configuration, with one function table per set of extras", () => {
  assert.equal(env(), env());
  const withMath = createEnvironment({ variables: { object: "dyn" }, extras: { math: true } });
  assert.notEqual(withMath, env());
  assert.equal(createEnvironment({ variables: { request: "dyn" }, extras: {} }).functions, env().functions);
});

void test("a program still held is found again; one nothing holds is collected", async () => {
  const source = `object.metadata.name != 'weak-cache-${Date.now()}'`;
  let first: Program | undefined = program(source);
  assert.equal(program(source), first);
  const ref = new WeakRef(first);
  first = undefined;
  await collect();
  assert.equal(ref.deref(), undefined, "the cache kept a program nothing else holds");
});
