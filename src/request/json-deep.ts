/**
 * Copying and writing JSON values of any depth. Request data nests as deep as the API server's
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

function isContainer(v: unknown): v is object {
  return typeof v === "object" && v !== null;
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

/** JSON text of a JSON value, exactly as JSON.stringify writes it (no indentation). */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (e) {
    if (!isStackOverflow(e)) throw e;
    return stringifyDeep(value);
  }
}

/**
 * JSON.stringify's output with an explicit stack: members whose value is undefined (or a function)
 * are left out of objects and written as null in arrays; scalars are written by JSON.stringify.
 */
function stringifyDeep(value: unknown): string {
  if (!isContainer(value)) return JSON.stringify(value);
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
      parts.push(f.keys === undefined ? "]" : "}");
      stack.pop();
      continue;
    }
    const i = f.i++;
    const v = f.values[i];
    const absent = v === undefined || typeof v === "function" || typeof v === "symbol";
    if (f.keys !== undefined && absent) continue;
    if (f.wrote) parts.push(",");
    f.wrote = true;
    if (f.keys !== undefined) parts.push(`${JSON.stringify(f.keys[i])}:`);
    if (isContainer(v) && typeof (v as { toJSON?: unknown }).toJSON !== "function") open(v);
    else parts.push(absent ? "null" : (JSON.stringify(v) as string));
  }
  return parts.join("");
}
