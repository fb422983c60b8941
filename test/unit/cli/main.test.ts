import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { COMMANDS } from "../../../src/adapters/cli/main.ts";
import { cli } from "./fake-io.ts";

test("--version prints the version from package.json", async () => {
  const pkg = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  const r = await cli(["--version"]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `celgate ${pkg.version}\n`);
  assert.equal(r.stderr, "");
});

test("--help and -h list every command on stdout", async () => {
  for (const flag of ["--help", "-h", "help"]) {
    const r = await cli([flag]);
    assert.equal(r.code, 0, flag);
    for (const c of COMMANDS)
      assert.match(r.stdout, new RegExp(`^  ${c.name} `, "m"), `${flag} lists ${c.name}`);
  }
});

test("no arguments: usage on stderr, exit 2", async () => {
  const r = await cli([]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /usage: celgate <command>/);
});

test("help <command> and <command> --help print that command's help", async () => {
  for (const c of COMMANDS) {
    const viaHelp = await cli(["help", c.name]);
    assert.equal(viaHelp.code, 0);
    assert.equal(viaHelp.stdout, c.help);
    assert.ok(c.help.includes(c.usage), `${c.name}'s help shows its usage`);
  }
  for (const name of ["expr", "check", "eval"]) {
    const r = await cli([name, "--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, new RegExp(`usage: celgate ${name}`));
  }
});

test("unknown commands and global options are usage errors naming them", async () => {
  const cases: [string[], RegExp][] = [
    [["frobnicate"], /unknown command 'frobnicate'/],
    [["help", "frobnicate"], /unknown command 'frobnicate'/],
    [["--verbose"], /unknown option '--verbose'/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message);
    assert.equal(r.stdout, "");
  }
});

test("no command is a stub: each rejects an unknown option as a usage error naming it", async () => {
  for (const c of COMMANDS) {
    const r = await cli([c.name, "--anything"]);
    assert.equal(r.code, 2, c.name);
    assert.doesNotMatch(r.stderr, /not implemented/, c.name);
    assert.match(r.stderr, /unknown option '--anything'/, c.name);
  }
});

test("the command table has unique names", () => {
  const names = COMMANDS.map((c) => c.name);
  assert.equal(new Set(names).size, names.length);
});

test("serve rejects bad options with exit 2 before starting anything", async () => {
  const missing = await cli(["serve"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing --policies PATH/);
  const badPort = await cli(["serve", "--policies", "x", "--port", "99999"]);
  assert.equal(badPort.code, 2);
  assert.match(badPort.stderr, /--port must be a port number, got '99999'/);
  const halfTls = await cli(["serve", "--policies", "x", "--tls-cert", "c.pem"]);
  assert.equal(halfTls.code, 2);
  assert.match(halfTls.stderr, /--tls-cert and --tls-key go together/);
});

test("CELGATE_CEL_CODEGEN: an unknown value is named in a warning and the command still runs", async () => {
  const bad = await cli(["expr", "1 + 1"], { env: { CELGATE_CEL_CODEGEN: "fast" } });
  assert.equal(bad.code, 0);
  assert.match(bad.stdout, /2/);
  assert.match(bad.stderr, /CELGATE_CEL_CODEGEN="fast" is not one of lazy, always, never; using lazy/);
  for (const ok of ["lazy", "always", "never", ""]) {
    const r = await cli(["expr", "1 + 1"], { env: { CELGATE_CEL_CODEGEN: ok } });
    assert.equal(r.code, 0, ok);
    assert.equal(r.stderr, "", ok);
  }
});

test("did you mean: a misspelt command, global option or command option names the likely one", async () => {
  const cases: [string[], RegExp][] = [
    [["chek", "x"], /^celgate: unknown command 'chek'; did you mean 'check'\?$/m],
    [["--verison"], /^celgate: unknown option '--verison'; did you mean '--version'\?$/m],
    [
      ["check", "--outptu", "json", "x"],
      /^celgate check: unknown option '--outptu'; did you mean '--output'\?$/m,
    ],
    [["eval", "--polcy", "x"], /^celgate eval: unknown option '--polcy'; did you mean '--policy'\?$/m],
    [["test", "--jnit", "r.xml"], /^celgate test: unknown option '--jnit'; did you mean '--junit'\?$/m],
    [["expr", "--objct", "x", "1"], /unknown option '--objct'; did you mean '--object'\?/],
    [["serve", "--prt", "1"], /^celgate serve: unknown option '--prt'; did you mean '--port'\?$/m],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(argv);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.stderr, message, argv.join(" "));
  }
  // Nothing close: no guess, and the command list for an unknown command.
  const far = await cli(["eval", "--zzzzzz"]);
  assert.match(far.stderr, /^celgate eval: unknown option '--zzzzzz'$/m);
  const list = await cli(["frobnicate"]);
  assert.match(list.stderr, /unknown command 'frobnicate'; commands: check, lint, eval/);
});
