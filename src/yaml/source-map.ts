/**
 * Field paths (`spec.validations[2].expression`) and where they were written: the parser reports
 * problems by path, and later stages (the CEL compiler, the engine) find the same places again through
 * a SourceMap without holding on to the YAML syntax tree themselves.
 */
import { isAlias, isMap, isScalar, isSeq } from "yaml";
import type { Document, LineCounter, Node } from "yaml";
import type { SourceLocation } from "../errors.ts";

export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Appends a key or an index to a path: `a.b`, `a[3]`, and `a["x.y/z"]` for keys that are not plain words. */
export function childPath(path: string, segment: PathSegment): string {
  if (typeof segment === "number") return `${path}[${segment}]`;
  if (!PLAIN_KEY.test(segment)) return `${path}[${JSON.stringify(segment)}]`;
  return path === "" ? segment : `${path}.${segment}`;
}

export function formatPath(segments: readonly PathSegment[]): string {
  return segments.reduce<string>((p, s) => childPath(p, s), "");
}

/** The inverse of formatPath; undefined for text that is not a path. */
export function parsePath(path: string): PathSegment[] | undefined {
  const segments: PathSegment[] = [];
  let i = 0;
  while (i < path.length) {
    const c = path[i];
    if (c === "[") {
      const close = path.indexOf("]", i);
      if (path[i + 1] === '"') {
        // A quoted key may itself contain ']', so find the closing quote by decoding JSON strings.
        let end = i + 2;
        while (end < path.length && !(path[end] === '"' && path[end - 1] !== "\\")) end++;
        if (path[end + 1] !== "]") return undefined;
        try {
          segments.push(JSON.parse(path.slice(i + 1, end + 1)) as string);
        } catch {
          return undefined;
        }
        i = end + 2;
      } else {
        if (close < 0) return undefined;
        const n = Number(path.slice(i + 1, close));
        if (!Number.isInteger(n) || n < 0) return undefined;
        segments.push(n);
        i = close + 1;
      }
    } else if (c === ".") {
      i++;
    } else {
      let end = i;
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
      segments.push(path.slice(i, end));
      i = end;
    }
  }
  return segments;
}

/** Positions in one file's text, shared by every document of the file. */
export class TextPositions {
  constructor(
    readonly file: string,
    private readonly lineCounter: LineCounter,
    /** The file's text, to place characters inside a value (YamlSourceMap.locateWithin). */
    readonly text?: string,
  ) {}

  at(offset: number): SourceLocation {
    const { line, col } = this.lineCounter.linePos(offset);
    return { file: this.file, line, column: col };
  }
}

export function resolveAlias(doc: Document.Parsed, node: unknown): unknown {
  let n = node;
  for (let depth = 0; depth < 100 && isAlias(n); depth++) n = n.resolve(doc);
  return n;
}

/** A value written as nothing (`key:`) has an empty range, so point at the key instead. */
function isEmptyNode(node: Node): boolean {
  const r = node.range;
  return isScalar(node) && node.value === null && (!r || r[0] === r[1]);
}

export function nodeOffset(node: Node | undefined | null): number | undefined {
  return node?.range ? node.range[0] : undefined;
}

/**
 * Where the field paths of one object of a document are written (a List's items each get their own);
 * it is the policy model's SourceMap, which later stages use without the YAML syntax tree.
 */
export class YamlSourceMap {
  readonly file: string;

  constructor(
    private readonly positions: TextPositions,
    private readonly doc: Document.Parsed,
    private readonly root: Node,
  ) {
    this.file = positions.file;
  }

  /** The node at a path and the offset to report for it; a missing tail resolves to its nearest ancestor. */
  find(path: string): { node: Node | undefined; offset: number } {
    const segments = parsePath(path) ?? [];
    let node: Node = this.root;
    let offset = nodeOffset(node) ?? 0;
    for (const seg of segments) {
      const current = resolveAlias(this.doc, node);
      let next: Node | undefined;
      let keyOffset: number | undefined;
      if (typeof seg === "string" && isMap(current)) {
        for (const pair of current.items) {
          const key = resolveAlias(this.doc, pair.key);
          if (isScalar(key) && String(key.value) === seg) {
            next =
              isScalar(pair.value) || isMap(pair.value) || isSeq(pair.value) || isAlias(pair.value)
                ? pair.value
                : undefined;
            keyOffset = nodeOffset(key);
            break;
          }
        }
      } else if (typeof seg === "number" && isSeq(current)) {
        const item = current.items[seg];
        next = isScalar(item) || isMap(item) || isSeq(item) || isAlias(item) ? item : undefined;
      }
      if (next === undefined) {
        if (keyOffset !== undefined) return { node: undefined, offset: keyOffset };
        return { node: undefined, offset };
      }
      node = next;
      const o = isEmptyNode(next) ? keyOffset : nodeOffset(next);
      offset = o ?? offset;
    }
    return { node, offset };
  }

  locate(path: string): SourceLocation {
    return this.positions.at(this.find(path).offset);
  }

  /**
   * Where the character at `offset` of the string value at `path` is written: inside a multi-line
   * block scalar, its own line and column rather than the scalar's first line.
   */
  locateWithin(path: string, offset: number): SourceLocation {
    const { node, offset: start } = this.find(path);
    const text = this.positions.text;
    if (text === undefined || !isScalar(node) || typeof node.value !== "string" || !node.range)
      return this.positions.at(start);
    const at = rawOffset(node.value, text, node.range[0], node.range[1], offset);
    return this.positions.at(at ?? start);
  }
}

/**
 * The offset in the file of the character at `offset` of a scalar's value, whose source spans
 * [from, to): the value's characters are matched in order against the source's, which holds them
 * all but for what indentation, folding, quoting and escapes change. A character that is not matched
 * (a folded line break, an escape) takes the place of the last one matched before it.
 */
function rawOffset(
  value: string,
  text: string,
  from: number,
  to: number,
  offset: number,
): number | undefined {
  let r = from;
  // Skip the block scalar's header (`|`, `>-`, `|2+`) and a quoted scalar's opening quote.
  if (text[r] === "|" || text[r] === ">") {
    while (r < to && text[r] !== "\n") r++;
    r++;
  } else if (text[r] === '"' || text[r] === "'") r++;
  let last = r;
  for (let i = 0; i <= offset && i < value.length; i++) {
    const c = value[i] as string;
    if (c === " " || c === "\n" || c === "\t") {
      if (i === offset) return last;
      continue;
    }
    let j = r;
    while (j < to && text[j] !== c) j++;
    if (j >= to) return last;
    last = j;
    r = j + 1;
  }
  return last;
}
