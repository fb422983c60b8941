/**
 * What cel-go's parser rejects in literals and @bufbuild/cel's accepts: escapes its lexer does not
 * know (`'\d'`, `'\u12'`, `'\777'`), escapes that do not unescape (`b'\u00e9'`, `'\U00110000'`),
 * and numbers out of range (`9223372036854775808`, `18446744073709551616u`, `1e999`).
 *
 * They are parse errors: parse.ts throws the first one found. The lexer follows cel-go's grammar
 * (parser/gen/CEL.g4) and the messages its parser (parser.go VisitInt/VisitUint/VisitDouble,
 * unescape.go). Of the cascade of errors ANTLR reports after a token recognition error, only the
 * first is reproduced.
 */

export interface LiteralIssue {
  readonly offset: number;
  readonly message: string;
}

type TokenKind = "int" | "uint" | "float" | "string" | "ident" | "minus" | "close" | "other";

interface Token {
  readonly kind: TokenKind;
  readonly start: number;
  readonly end: number;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

// Character classes by comparison: the scanner looks at every character of the source once.
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isLetter = (c: string | undefined): boolean =>
  c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));
const isHex = (c: string | undefined): boolean =>
  isDigit(c) || (c !== undefined && ((c >= "a" && c <= "f") || (c >= "A" && c <= "F")));
const isIdentStart = (c: string | undefined): boolean => isLetter(c) || c === "_";
const isIdentPart = (c: string | undefined): boolean => isIdentStart(c) || isDigit(c);
const isSpace = (c: string): boolean => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f";

/** An exponent at a given index (sticky: matched in place, without slicing the source). */
const EXPONENT = /[eE][+-]?\d+/y;

const SIMPLE_ESCAPES = new Set(["a", "b", "f", "n", "r", "t", "v", '"', "'", "\\", "?", "`"]);

/**
 * Where an escape sequence starting at `at` (the backslash) stops being one the lexer accepts:
 * the index of the offending character, or undefined when the sequence is whole; `next` is where
 * the text continues after a whole sequence.
 */
function escapeEnd(src: string, at: number): { bad?: number; next: number } {
  const c = src[at + 1];
  if (c !== undefined && SIMPLE_ESCAPES.has(c)) return { next: at + 2 };
  const run = (from: number, n: number, ok: (x: string | undefined) => boolean) => {
    for (let i = 0; i < n; i++) if (!ok(src[from + i])) return { bad: from + i, next: from + i };
    return { next: from + n };
  };
  switch (c) {
    case "x":
    case "X":
      return run(at + 2, 2, isHex);
    case "u":
      return run(at + 2, 4, isHex);
    case "U":
      return run(at + 2, 8, isHex);
    case "0":
    case "1":
    case "2":
    case "3":
      return run(at + 2, 2, (x) => x !== undefined && x >= "0" && x <= "7");
    default:
      return { bad: at + 1, next: at + 1 };
  }
}

/** A code point an escape produces in a string (not bytes), if Go's utf8.ValidRune rejects it. */
function invalidCodePoint(src: string, at: number): boolean {
  const c = src[at + 1];
  let digits: string;
  if (c === "u") digits = src.slice(at + 2, at + 6);
  else if (c === "U") digits = src.slice(at + 2, at + 10);
  else if (c !== undefined && c >= "0" && c <= "3")
    return false; // at most \377
  else return false;
  const v = Number.parseInt(digits, 16);
  return v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff);
}

class Scanner {
  readonly tokens: Token[] = [];
  readonly issues: LiteralIssue[] = [];
  private i = 0;
  constructor(private readonly src: string) {}

  scan(): void {
    const src = this.src;
    while (this.i < src.length) {
      const c = src[this.i] as string;
      if (isSpace(c)) this.i++;
      else if (c === "/" && src[this.i + 1] === "/")
        while (this.i < src.length && src[this.i] !== "\n") this.i++;
      else if ("'\"rRbB".includes(c) && this.stringStart() !== undefined) this.string();
      else if (isDigit(c) || (c === "." && isDigit(src[this.i + 1]))) this.number();
      else if (isIdentStart(c)) this.ident();
      else if (c === "`") {
        const close = src.indexOf("`", this.i + 1);
        this.push("ident", this.i, close < 0 ? src.length : close + 1);
      } else
        this.push(
          c === "-" ? "minus" : c === ")" || c === "]" || c === "}" ? "close" : "other",
          this.i,
          this.i + 1,
        );
    }
  }

  private push(kind: TokenKind, start: number, end: number): void {
    this.tokens.push({ kind, start, end });
    this.i = end;
  }

  /** The length of a string or bytes literal's prefix (r, b, rb, br in either case), if one starts here. */
  private stringStart(): number | undefined {
    const m = /^(?:[rR][bB]?|[bB][rR]?)?['"]/.exec(this.src.slice(this.i, this.i + 3));
    return m ? m[0].length - 1 : undefined;
  }

  private string(): void {
    const src = this.src;
    const start = this.i;
    const prefix = (this.stringStart() as number) ?? 0;
    const raw = /[rR]/.test(src.slice(start, start + prefix));
    const bytes = /[bB]/.test(src.slice(start, start + prefix));
    let j = start + prefix;
    const quote =
      src.startsWith("'''", j) || src.startsWith('"""', j) ? src.slice(j, j + 3) : (src[j] as string);
    j += quote.length;
    let issue: LiteralIssue | undefined;
    while (j < src.length && !src.startsWith(quote, j)) {
      if (raw || src[j] !== "\\") {
        j++;
        continue;
      }
      const esc = escapeEnd(src, j);
      if (esc.bad !== undefined) {
        issue ??= {
          offset: start,
          message: `Syntax error: token recognition error at: '${src.slice(start, esc.bad + 1)}'`,
        };
        j = esc.bad + 1;
        continue;
      }
      // Lexed, but unescape.go refuses it: \u and \U in bytes, and code points that are not runes.
      if (bytes && (src[j + 1] === "u" || src[j + 1] === "U"))
        issue ??= { offset: start, message: "unable to unescape string" };
      else if (!bytes && invalidCodePoint(src, j))
        issue ??= { offset: start, message: "invalid unicode code point" };
      j = esc.next;
    }
    if (issue) this.issues.push(issue);
    this.push("string", start, Math.min(src.length, j + quote.length));
  }

  private number(): void {
    const src = this.src;
    const start = this.i;
    let j = start;
    if (src.startsWith("0x", j) && isHex(src[j + 2])) {
      j += 2;
      while (isHex(src[j])) j++;
      if (src[j] === "u" || src[j] === "U") {
        this.push("uint", start, j + 1);
        return;
      }
      this.push("int", start, j);
      return;
    }
    while (isDigit(src[j])) j++;
    let float = false;
    if (src[j] === "." && isDigit(src[j + 1])) {
      float = true;
      j++;
      while (isDigit(src[j])) j++;
    }
    EXPONENT.lastIndex = j;
    const exp = EXPONENT.exec(src);
    if (exp) {
      float = true;
      j += exp[0].length;
    }
    if (!float && (src[j] === "u" || src[j] === "U")) {
      this.push("uint", start, j + 1);
      return;
    }
    this.push(float ? "float" : "int", start, j);
  }

  private ident(): void {
    let j = this.i + 1;
    while (isIdentPart(this.src[j])) j++;
    this.push("ident", this.i, j);
  }
}

/** Whether a token ends an operand, so that a `-` after it is a binary minus. */
function endsOperand(t: Token | undefined, src: string): boolean {
  if (t === undefined) return false;
  if (t.kind === "ident") return src.slice(t.start, t.end) !== "in";
  return (
    t.kind === "int" || t.kind === "uint" || t.kind === "float" || t.kind === "string" || t.kind === "close"
  );
}

/**
 * Whether the number at `k` carries the `-` before it as its sign. cel-go's grammar gives a literal
 * its sign (`literal: sign=MINUS? NUM_INT`) only when that minus is alone: in `--5` both minuses
 * negate the unsigned 5, in `a - -5` the second is the literal's sign.
 */
function signed(tokens: readonly Token[], k: number, src: string): boolean {
  let r = k;
  while (r > 0 && tokens[r - 1]?.kind === "minus") r--;
  let run = k - r;
  if (run > 0 && endsOperand(tokens[r - 1], src)) run--;
  return run === 1;
}

/** The literal errors of a CEL source, in order. */
export function checkLiterals(src: string): LiteralIssue[] {
  const s = new Scanner(src);
  s.scan();
  const out = [...s.issues];
  s.tokens.forEach((t, k) => {
    if (t.kind !== "int" && t.kind !== "uint" && t.kind !== "float") return;
    const sign = t.kind !== "uint" && signed(s.tokens, k, src);
    const offset = sign ? (s.tokens[k - 1] as Token).start : t.start;
    const text = src.slice(t.start, t.end);
    if (t.kind === "float") {
      if (!Number.isFinite(Number(text))) out.push({ offset, message: "invalid double literal" });
      return;
    }
    const digits = t.kind === "uint" ? text.slice(0, -1) : text;
    let v = BigInt(digits);
    if (sign) v = -v;
    const ok = t.kind === "uint" ? v <= UINT64_MAX : v >= INT64_MIN && v <= INT64_MAX;
    if (!ok) out.push({ offset, message: `invalid ${t.kind} literal` });
  });
  return out.sort((a, b) => a.offset - b.offset);
}
