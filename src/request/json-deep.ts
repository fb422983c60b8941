/**
 * Copying and writing JSON values of any depth, with numbers as yaml/json-numbers.ts reads them (a
 * bigint for an int64 beyond 2^53, a Number object for an integral float64), which are scalars here. Request data nests as deep as the API server's
 * decoder allows (10,000 levels), deeper than the native `structuredClone` and `JSON.stringify`
 * recurse before V8's stack runs out (a few thousand levels on the main thread). Each helper runs
 * the native one, which is fast and enough for every ordinary object, and only when that runs out
 * of stack does the same work with an explicit stack, so a deep value costs time linear in its size
 * and never fails a review.
 */

function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/** A container being copied or written: its values, its keys (a map's), and the position reached. */
interface Frame {
  readonly values: readonly unknown[];
  readonly keys: readonly string[] | undefined;
  i: number;
}

function frameOf(v: object): Frame {
  if (Array.isArray(v)) return { values: v, keys: undefined, i: 0 };
  const keys = Object.keys(v);
  const record = v as Record<string, unknown>;
  return { values: keys.map((k) => record[k]), keys, i: 0 };
}

/** An array or a map: a Number object (a float64 read exactly) is a scalar. */
function isContainer(v: unknown): v is object {
  return typeof v === "object" && v !== null && !(v instanceof Number);
}

/** Sets a member, `__proto__` included (as an own member, never the prototype). */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** A deep copy of a JSON value (plain objects, arrays and scalars), as structuredClone makes one. */
export function cloneJson<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch (e) {
    if (!isStackOverflow(e)) throw e;
    return cloneDeep(value) as T;
  }
}

function cloneDeep(value: unknown): unknown {
  if (!isContainer(value)) return value;
  const copyOf = (v: object): unknown[] | Record<string, unknown> =>
    Array.isArray(v) ? new Array(v.length) : {};
  const root = copyOf(value);
  const stack: { frame: Frame; out: unknown[] | Record<string, unknown> }[] = [
    { frame: frameOf(value), out: root },
  ];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as (typeof stack)[number];
    const { frame, out } = top;
    if (frame.i === frame.values.length) {
      stack.pop();
      continue;
    }
    const i = frame.i++;
    const v = frame.values[i];
    let copy = v;
    if (isContainer(v)) {
      copy = copyOf(v);
      stack.push({ frame: frameOf(v), out: copy as unknown[] | Record<string, unknown> });
    }
    if (frame.keys === undefined) (out as unknown[])[i] = copy;
    else put(out as Record<string, unknown>, frame.keys[i] as string, copy);
  }
  return root;
}

function isBigIntRefusal(e: unknown): boolean {
  return e instanceof TypeError && /BigInt/i.test(e.message);
}

/**
 * JSON text of a JSON value, as JSON.stringify writes it (with `space`, indented as it indents), and
 * a bigint written as its digits, which JSON.stringify refuses. The native writer runs first; a
 * value too deep for it or holding a bigint is written by the explicit-stack writer.
 */
export function stringifyJson(value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, null, space);
  } catch (e) {
    if (!isStackOverflow(e) && !isBigIntRefusal(e)) throw e;
    return stringifyDeep(value, space ?? 0);
  }
}

/** A scalar as JSON.stringify writes it, a bigint as its digits; undefined for an absent member. */
function scalarText(v: unknown): string | undefined {
  return typeof v === "bigint" ? v.toString() : JSON.stringify(v);
}

/**
 * JSON.stringify's output with an explicit stack: members whose value is undefined (or a function)
 * are left out of objects and written as null in arrays; scalars are written by JSON.stringify,
 * bigints as their digits; `space` indents as JSON.stringify's `space` does.
 */
function stringifyDeep(value: unknown, space: number): string {
  if (!isContainer(value) || typeof (value as { toJSON?: unknown }).toJSON === "function")
    return scalarText(value) ?? "null";
  const unit = " ".repeat(Math.min(10, Math.max(0, Math.trunc(space))));
  const newline = (depth: number): string => (unit === "" ? "" : `\n${unit.repeat(depth)}`);
  const parts: string[] = [];
  const stack: (Frame & { wrote: boolean })[] = [];
  const open = (v: object): void => {
    parts.push(Array.isArray(v) ? "[" : "{");
    stack.push({ ...frameOf(v), wrote: false });
  };
  open(value);
  while (stack.length > 0) {
    const f = stack[stack.length - 1] as Frame & { wrote: boolean };
    if (f.i === f.values.length) {
      stack.pop();
      if (f.wrote) parts.push(newline(stack.length));
      parts.push(f.keys === undefined ? "]" : "}");
      continue;
    }
    const i = f.i++;
    const v = f.values[i];
    const absent = v === undefined || typeof v === "function" || typeof v === "symbol";
    if (f.keys !== undefined && absent) continue;
    if (f.wrote) parts.push(",");
    f.wrote = true;
    parts.push(newline(stack.length));
    if (f.keys !== undefined) parts.push(`${JSON.stringify(f.keys[i])}:${unit === "" ? "" : " "}`);
    if (isContainer(v) && typeof (v as { toJSON?: unknown }).toJSON !== "function") open(v);
    else parts.push(absent ? "null" : (scalarText(v) ?? "null"));
  }
  return parts.join("");
}
