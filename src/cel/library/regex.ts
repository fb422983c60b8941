/**
 * Kubernetes' regex library (k8s.io/apiserver/pkg/cel/library/regex.go): `find` and `findAll` on
 * strings, with RE2 syntax and leftmost-first matching like Go's regexp.
 *
 *   "abc 123".find('[0-9]+')          // '123'; '' when nothing matches
 *   "123 abc 456".findAll('[0-9]+')    // ['123', '456']
 *   "123 abc 456".findAll('[0-9]+', 1) // ['123']; a negative limit means all
 *
 * Cost (library/cost.go), in place of the base cost: ceil(0.1 × (1 + length of the string)) ×
 * ceil(0.25 × length of the pattern), lengths in code points.
 */
import { CelError, type CelList } from "../runtime/values.ts";
import { type CallContext, type CelRegex, fn, type Library, memberFn } from "./types.ts";

function compile(ctx: CallContext, pattern: string): CelRegex {
  try {
    return ctx.regex(pattern);
  } catch (e) {
    // A pattern that is not a constant is only checked here; Kubernetes prefixes the parser's message.
    if (e instanceof CelError && e.message.startsWith("error parsing regexp")) {
      throw new CelError(`Illegal regex: ${e.message}`);
    }
    throw e;
  }
}

function find(text: string, pattern: string, ctx: CallContext): string {
  return compile(ctx, pattern).find(text, ctx) ?? "";
}

function findAll(text: string, pattern: string, limit: bigint, ctx: CallContext): CelList {
  // Go converts the limit to int; anything negative means no limit.
  const n =
    limit < 0n ? -1 : limit > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(limit);
  return compile(ctx, pattern).findAll(text, n, ctx);
}

function codePointCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function regexCost(text: string, pattern: string): number {
  const strCost = Math.ceil((1 + codePointCount(text)) * 0.1);
  const patternCost = Math.ceil(codePointCount(pattern) * 0.25);
  return strCost * patternCost - 1;
}

export const regexLibrary: Library = {
  name: "kubernetes.regex",
  availability: "kubernetes",
  functions: [
    fn("find", memberFn("string_find_string", ["string", "string"], "string", find, regexCost)),
    fn(
      "findAll",
      memberFn(
        "string_find_all_string",
        ["string", "string"],
        "list",
        (text: string, pattern: string, ctx: CallContext) => findAll(text, pattern, -1n, ctx),
        regexCost,
      ),
      memberFn("string_find_all_string_int", ["string", "string", "int"], "list", findAll, regexCost),
    ),
  ],
};
