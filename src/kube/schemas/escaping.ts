/**
 * How Kubernetes turns a schema's property names into CEL field names, and back
 * (k8s.io/apiserver/pkg/cel/escaping.go Escape and Unescape).
 */
import { CEL_RESERVED } from "../../policy/fields.ts";

/** The CEL lexer's reserved words (escaping.go celReservedSymbols); `namespace` is among them. */
export const CEL_RESERVED_SYMBOLS: ReadonlySet<string> = CEL_RESERVED;

const IDENT_CHAR = /^[A-Za-z0-9_]$/;

/**
 * Escape: the CEL identifier for a property name, or undefined when the property cannot be a CEL
 * field (empty, starting with a digit, or holding a character outside `[A-Za-z0-9_./-]`, such as any
 * non-ASCII one). Reserved words become `__word__`; `__` becomes `__underscores__`, `.` `__dot__`,
 * `-` `__dash__` and `/` `__slash__`, scanning left to right (so `___` is `__underscores___`).
 */
export function escapeFieldName(ident: string): string | undefined {
  if (ident.length === 0 || (ident[0]! >= "0" && ident[0]! <= "9")) return undefined;
  if (CEL_RESERVED_SYMBOLS.has(ident)) return `__${ident}__`;
  let out = "";
  for (let i = 0; i < ident.length; i++) {
    const c = ident[i]!;
    if (c === "_" && ident[i + 1] === "_") {
      out += "__underscores__";
      i++;
    } else if (c === ".") out += "__dot__";
    else if (c === "-") out += "__dash__";
    else if (c === "/") out += "__slash__";
    else if (IDENT_CHAR.test(c)) out += c;
    else return undefined;
  }
  return out;
}

/**
 * Unescape: the property name a CEL field name stands for, or undefined for an invalid escape
 * sequence. A reserved word's escape (`__in__`) is only valid as the whole name.
 */
export function unescapeFieldName(escaped: string): string | undefined {
  let ok = true;
  const out = escaped.replace(/__[^_]+__/g, (s) => {
    const contents = s.slice(2, -2);
    switch (contents) {
      case "underscores":
        return "__";
      case "dot":
        return ".";
      case "dash":
        return "-";
      case "slash":
        return "/";
    }
    if (CEL_RESERVED_SYMBOLS.has(contents)) {
      if (s.length !== escaped.length) ok = false;
      return contents;
    }
    ok = false;
    return "";
  });
  return ok ? out : undefined;
}
