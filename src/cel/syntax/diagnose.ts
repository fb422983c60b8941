/**
 * cel-go's words and place for the syntax errors people make most: an unclosed or unbalanced
 * bracket and a trailing operator. @bufbuild/cel's parser is a PEG parser: on `f(x,\n  (y)` it
 * backtracks and reports `found . but expecting end of input` on the first line, where cel-go's
 * ANTLR parser says `missing ')' at '<EOF>'` at the end (parser/parser.go's error listener words
 * ANTLR's recovery: a single missing token is `missing X at Y`, an unexpected one is `mismatched
 * input Y expecting {...}` or `extraneous input Y expecting ...`). Asked only once the parse failed;
 * anything it cannot tell apart (an unterminated string, a fault in the middle) is left to the parser.
 * Each message here is the one kube-apiserver 1.36 and 1.37 return (test/kube/acceptance.test.ts).
 */

/** What may start an operand, as cel-go's grammar lists it after an operator (CEL.g4 primary). */
const OPERAND_EXPECTED =
  "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

const OPERATORS = ["&&", "||", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!", "in"];

const CLOSER: Readonly<Record<string, string>> = { "(": ")", "[": "]", "{": "}" };

export interface SyntaxDiagnosis {
  readonly message: string;
  readonly offset: number;
}

interface Token {
  readonly text: string;
  readonly offset: number;
}

/** The tokens that matter here (brackets, operators, words), or undefined at an unterminated string. */
function tokens(src: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (src.startsWith("//", i)) {
      const nl = src.indexOf("\n", i);
      i = nl < 0 ? src.length : nl + 1;
      continue;
    }
    const quote = /^(?:[rRbB]{1,2})?('''|"""|'|")/.exec(src.slice(i, i + 5));
    if (quote) {
      const q = quote[1] as string;
      const raw = /[rR]/.test(quote[0].slice(0, -q.length));
      let j = i + quote[0].length;
      for (;;) {
        if (j >= src.length) return undefined;
        if (!raw && src[j] === "\\") j += 2;
        else if (src.startsWith(q, j)) break;
        else if (q.length === 1 && src[j] === "\n") return undefined;
        else j++;
      }
      out.push({ text: "STRING", offset: i });
      i = j + q.length;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*|^[0-9][0-9A-Za-z_.]*/.exec(src.slice(i));
    if (word) {
      out.push({ text: word[0], offset: i });
      i += word[0].length;
      continue;
    }
    const two = src.slice(i, i + 2);
    const text = ["&&", "||", "==", "!=", "<=", ">="].includes(two) ? two : c;
    out.push({ text, offset: i });
    i += text.length;
  }
  return out;
}

/** cel-go's error for `src`, which failed to parse, when it is one this module words; else undefined. */
export function diagnoseSyntax(src: string): SyntaxDiagnosis | undefined {
  const toks = tokens(src);
  if (toks === undefined || toks.length === 0) return undefined;
  const open: Token[] = [];
  for (const t of toks) {
    if (t.text in CLOSER) open.push(t);
    else if (t.text === ")" || t.text === "]" || t.text === "}") {
      const top = open.pop();
      if (top === undefined)
        return t.text === ")"
          ? { message: `extraneous input ')' expecting <EOF>`, offset: t.offset }
          : undefined;
      const want = CLOSER[top.text] as string;
      if (want === t.text) continue;
      return top.text === "("
        ? { message: `mismatched input '${t.text}' expecting ')'`, offset: t.offset }
        : undefined;
    }
  }
  const end = src.length;
  const last = toks[toks.length - 1] as Token;
  if (OPERATORS.includes(last.text))
    return { message: `mismatched input '<EOF>' expecting ${OPERAND_EXPECTED}`, offset: end };
  const top = open.at(-1);
  if (top === undefined) return undefined;
  if (top.text === "(") return { message: `missing ')' at '<EOF>'`, offset: end };
  const closer = CLOSER[top.text] as string;
  return { message: `mismatched input '<EOF>' expecting {'${closer}', ','}`, offset: end };
}
