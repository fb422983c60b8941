/**
 * The automata (src/cel/regex: lazy DFAs, their NFA simulation, the reverse search for a match's
 * start) against two independent references on generated patterns and texts:
 *
 * - a Pike VM over RE2/J's program, kept here as the reference for match positions: leftmost-first
 *   matching as Go's regexp/exec.go does it (threads in priority order, a new thread at each
 *   position until something matches, a match cutting lower priorities), which is what celgate ran
 *   before the DFAs;
 * - RE2/J's own matcher (`RE2JS.test`) for yes or no.
 *
 * Each pattern also runs with the smallest cache budget, which empties the cache every few states
 * and makes searches give it up and resume it, so those paths answer the same as the cached one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RE2JS } from "@bufbuild/re2";
import { compileRegexWith } from "../../../src/cel/regex/index.ts";

type Re2Prog = ReturnType<RE2JS["re2"]>["prog"];

const ALT = 1;
const ALT_MATCH = 2;
const CAPTURE = 3;
const EMPTY_WIDTH = 4;
const MATCH = 6;
const NOP = 7;

function isWord(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/** Go's empty-width context between the code points around `pos` (-1 at either end). */
function contextAt(text: string, pos: number): number {
  const before = pos > 0 ? text.charCodeAt(pos - 1) : -1;
  const after = pos < text.length ? text.charCodeAt(pos) : -1;
  let flag = 0;
  if (before < 0) flag |= 0x04 | 0x01;
  if (before === 0x0a) flag |= 0x01;
  if (after < 0) flag |= 0x08 | 0x02;
  if (after === 0x0a) flag |= 0x02;
  flag |= (before >= 0 && isWord(before)) !== (after >= 0 && isWord(after)) ? 0x10 : 0x20;
  return flag;
}

/** The reference: leftmost-first match at or after `pos` by Pike VM, as [start, end). */
function pikeMatch(prog: Re2Prog, text: string, pos: number): [number, number] | undefined {
  const anchored = (prog.startCond() & 0x04) !== 0;
  type Thread = { pc: number; start: number };
  const add = (list: Thread[], seen: Set<number>, pc: number, start: number, flag: number): void => {
    if (seen.has(pc)) return;
    seen.add(pc);
    const inst = prog.inst[pc];
    if (inst === undefined) return;
    if (inst.op === ALT || inst.op === ALT_MATCH) {
      add(list, seen, inst.out, start, flag);
      add(list, seen, inst.arg, start, flag);
    } else if (inst.op === NOP || inst.op === CAPTURE) add(list, seen, inst.out, start, flag);
    else if (inst.op === EMPTY_WIDTH) {
      if ((inst.arg & ~flag) === 0) add(list, seen, inst.out, start, flag);
    } else list.push({ pc, start });
  };
  let clist: Thread[] = [];
  let seen = new Set<number>();
  let matched: [number, number] | undefined;
  for (let i = pos; ; ) {
    if (matched === undefined && (!anchored || i === 0)) add(clist, seen, prog.start, i, contextAt(text, i));
    else if (clist.length === 0) break;
    const atEnd = i >= text.length;
    const r = atEnd ? -1 : (text.codePointAt(i) as number);
    const next = atEnd ? i : i + (r > 0xffff ? 2 : 1);
    const nlist: Thread[] = [];
    const nseen = new Set<number>();
    for (const t of clist) {
      const inst = prog.inst[t.pc];
      if (inst === undefined) continue;
      if (inst.op === MATCH) {
        matched = [t.start, i];
        break;
      }
      if (!atEnd && inst.matchRune(r)) add(nlist, nseen, inst.out, t.start, contextAt(text, next));
    }
    if (atEnd) break;
    clist = nlist;
    seen = nseen;
    i = next;
  }
  return matched;
}

/** Go's FindAllString over the reference. */
function pikeFindAll(prog: Re2Prog, text: string): string[] {
  const out: string[] = [];
  let pos = 0;
  let prevEnd = -1;
  while (pos <= text.length) {
    const m = pikeMatch(prog, text, pos);
    if (m === undefined) break;
    const [start, end] = m;
    const accept = !(end === pos && start === prevEnd);
    if (end === pos) pos += pos < text.length && (text.codePointAt(pos) as number) > 0xffff ? 2 : 1;
    else pos = end;
    prevEnd = end;
    if (accept) out.push(text.slice(start, end));
  }
  return out;
}

function rng(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

const ATOMS = [
  "a",
  "b",
  ".",
  "[ab]",
  "[^a]",
  "\\d",
  "\\w",
  "\\W",
  "\\s",
  "\\pL",
  "\\p{Greek}",
  "\\PN",
  "😀",
  "[😀-😂]",
  "é",
  "σ",
  "\\b",
  "\\B",
  "^",
  "$",
  "\\A",
  "\\z",
  "(?m:^)",
  "(?m:$)",
  "(?i:É)",
  "(?i:Σ)",
  "(?i:k)",
  "(?i:s)",
  "(?s:.)",
  "\n",
  "",
];
const QUANTIFIERS = ["", "", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{0,2}", "{1,3}?", "{3,}"];
const CHARS = [
  "a",
  "b",
  "x",
  "1",
  " ",
  "\n",
  "😀",
  "😁",
  "é",
  "É",
  "σ",
  "ς",
  "Σ",
  "K",
  "\u212a",
  "ſ",
  "_",
  "\ud800",
];

function generator(rnd: (n: number) => number): (depth: number) => string {
  const gen = (depth: number): string => {
    let s = "";
    for (let k = 0, n = 1 + rnd(3); k < n; k++) {
      const r = rnd(10);
      let atom: string;
      if (depth > 0 && r < 2) atom = `(${gen(depth - 1)})`;
      else if (depth > 0 && r < 3) atom = `(?:${gen(depth - 1)}|${gen(depth - 1)})`;
      else atom = ATOMS[rnd(ATOMS.length)] as string;
      // Quantifying an assertion or nothing is a syntax error in RE2 only sometimes; skip it.
      const bare = atom === "" || /^(\^|\$|\\[bBAz]|\(\?m:[$^]\))$/.test(atom);
      s += atom + (bare ? "" : (QUANTIFIERS[rnd(QUANTIFIERS.length)] as string));
    }
    return s;
  };
  return gen;
}

function texts(rnd: (n: number) => number): string[] {
  const out = [""];
  for (let j = 0; j < 5; j++) {
    let t = "";
    for (let k = 0, n = rnd(14); k < n; k++) t += CHARS[rnd(CHARS.length)];
    out.push(t);
  }
  return out;
}

void test("the automata agree with a Pike VM and RE2/J on generated patterns", () => {
  const rnd = rng(2028);
  const gen = generator(rnd);
  let compared = 0;
  for (let t = 0; t < 700; t++) {
    let pattern = gen(2);
    if (rnd(5) === 0) pattern = `(?i)${pattern}`;
    if (rnd(7) === 0) pattern = `(?U)${pattern}`;
    if (rnd(9) === 0) pattern = `(?m)${pattern}`;
    let re2: RE2JS;
    try {
      re2 = RE2JS.compile(pattern);
    } catch {
      continue;
    }
    const prog = re2.re2().prog;
    const cached = compileRegexWith(pattern, "re2js");
    const starved = compileRegexWith(pattern, "re2js", { budget: 1 });
    for (const text of texts(rnd)) {
      const m = pikeMatch(prog, text, 0);
      const expected = {
        test: re2.test(text),
        find: m === undefined ? undefined : text.slice(m[0], m[1]),
        all: pikeFindAll(prog, text),
      };
      assert.equal(expected.test, m !== undefined, `the references disagree on ${pattern}`);
      for (const [name, re] of [
        ["cached", cached],
        ["starved", starved],
      ] as const) {
        const got = { test: re.test(text), find: re.find(text), all: re.findAll(text, -1) };
        assert.deepEqual(got, expected, `${name} ${JSON.stringify(pattern)} on ${JSON.stringify(text)}`);
      }
      compared++;
    }
  }
  assert.ok(compared > 3000, `compared ${compared} cases`);
});

void test("long texts with a starved cache: resets, simulation and resumption agree with the cache", () => {
  const rnd = rng(7);
  const alphabet = ["a", "b", "c", "\n", " ", "é"];
  const patterns = [
    "(a|b)*a(a|b){6}c", // exponentially many states: the cache thrashes
    "((a{1,4}){1,4}){1,4}c", // many states while warming up, then few
    "(?m)^(a|b)+$",
    "\\b\\w+\\b",
    "(?i)(É|b)+c",
    "[^c]*c",
    "(a*)*b",
  ];
  for (const pattern of patterns) {
    const prog = RE2JS.compile(pattern).re2().prog;
    const cached = compileRegexWith(pattern, "re2js");
    const starved = compileRegexWith(pattern, "re2js", { budget: 1 });
    for (let j = 0; j < 6; j++) {
      let text = "";
      for (let k = 0, n = 200 + rnd(800); k < n; k++) text += alphabet[rnd(j < 3 ? 3 : alphabet.length)];
      const m = pikeMatch(prog, text, 0);
      const find = m === undefined ? undefined : text.slice(m[0], m[1]);
      const all = pikeFindAll(prog, text);
      for (const re of [cached, starved]) {
        assert.equal(re.test(text), m !== undefined, `${pattern} test`);
        assert.equal(re.find(text), find, `${pattern} find`);
        assert.deepEqual(re.findAll(text, -1), all, `${pattern} findAll`);
      }
    }
  }
});
