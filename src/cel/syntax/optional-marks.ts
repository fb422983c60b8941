/**
 * Kubernetes' CEL has optional syntax (`a.?b`, `m[?k]`, `[?x]`, `{?k: v}`) that @bufbuild/cel's
 * parser rejects. A small lexer finds each optional marker and blanks it out (same length, so every
 * offset stays true); parse.ts then flags the nodes at the recorded offsets as optional.
 */

export interface OptionalMarks {
  /** Offsets of the `.` of `.?` selections. */
  readonly selects: Set<number>;
  /** Offsets of the `[` of `[?` index operations. */
  readonly indexes: Set<number>;
  /** List literal `[` offset → indices of optional elements. */
  readonly listElements: Map<number, Set<number>>;
  /** Offsets just after the `{` or `,` that precede an optional map or struct entry. */
  readonly entries: Set<number>;
}

type Frame = { open: string; offset: number; isList: boolean; commas: number };

/**
 * Finds the optional markers and returns the source with each `?` marker replaced by a space.
 * A `?` is a marker when the previous token is `.`, `[`, `{` or a `,` inside `[...]`/`{...}`;
 * everywhere else it belongs to the conditional operator. A `[` opens a list unless it follows an
 * operand (then it is an index); the keyword `in` is an operator.
 */
export function stripOptionalMarkers(source: string): { text: string; marks: OptionalMarks } {
  const marks: OptionalMarks = {
    selects: new Set(),
    indexes: new Set(),
    listElements: new Map(),
    entries: new Set(),
  };
  const chars = source.split("");
  const stack: Frame[] = [];
  let prev = ""; // previous significant token: a punctuation char, "in", or "x" for the end of an operand
  let prevOffset = -1;
  let i = 0;
  const n = source.length;
  while (i < n) {
    const c = source[i] as string;
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v") {
      i++;
      continue;
    }
    if (c === "/" && source[i + 1] === "/") {
      while (i < n && source[i] !== "\n") i++;
      continue;
    }
    // String and bytes literals, with r/b prefixes and triple quotes.
    const lit = /^(?:[rR][bB]?|[bB][rR]?)?("""|'''|"|')/.exec(source.slice(i, i + 5));
    if (lit) {
      const quote = lit[1] as string;
      const raw = /[rR]/.test(lit[0].slice(0, lit[0].length - quote.length));
      let j = i + lit[0].length;
      while (j < n && !source.startsWith(quote, j)) {
        if (!raw && source[j] === "\\") j++;
        j++;
      }
      i = j + quote.length;
      prev = "x";
      continue;
    }
    if (/[A-Za-z_0-9]/.test(c)) {
      const start = i;
      while (i < n && /[A-Za-z_0-9.]/.test(source[i] as string)) {
        // A dot ends an identifier unless it is a decimal point of a number.
        if (source[i] === "." && !/^[0-9]/.test(c)) break;
        if (source[i] === "." && !/[0-9]/.test(source[i + 1] ?? "")) break;
        i++;
      }
      // `in` is an operator, not an operand: the `[` after it opens a list (`x in [?a]`).
      prev = source.slice(start, i) === "in" ? "in" : "x";
      continue;
    }
    if (c === "?") {
      const top = stack[stack.length - 1];
      let marker = true;
      if (prev === ".") marks.selects.add(prevOffset);
      else if (prev === "[" && top && top.offset === prevOffset) {
        if (top.isList) addListElement(marks, top);
        else marks.indexes.add(prevOffset);
      } else if (prev === "{" && top && top.offset === prevOffset) marks.entries.add(prevOffset + 1);
      else if (prev === "," && top && top.open === "[" && top.isList) addListElement(marks, top);
      else if (prev === "," && top && top.open === "{") marks.entries.add(prevOffset + 1);
      else marker = false;
      if (marker) {
        chars[i] = " ";
        i++;
        continue;
      }
    }
    if (c === "(" || c === "[" || c === "{") {
      stack.push({ open: c, offset: i, isList: c === "[" && prev !== "x", commas: 0 });
    } else if (c === ")" || c === "]" || c === "}") {
      stack.pop();
    } else if (c === ",") {
      const top = stack[stack.length - 1];
      if (top) top.commas++;
    }
    prev = c === ")" || c === "]" || c === "}" ? "x" : c;
    prevOffset = i;
    i++;
  }
  return { text: chars.join(""), marks };
}

function addListElement(marks: OptionalMarks, frame: Frame): void {
  let set = marks.listElements.get(frame.offset);
  if (!set) {
    set = new Set();
    marks.listElements.set(frame.offset, set);
  }
  set.add(frame.commas);
}
