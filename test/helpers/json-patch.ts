/**
 * A small RFC 6902 JSON Patch applier (with RFC 6901 pointers), written for the tests so that a
 * patch the webhook sends is checked by code that shares nothing with the engine, which uses
 * fast-json-patch. Strict: any operation the RFC calls an error throws, so a sloppy patch (a
 * missing parent, an index past the end, a failed `test`) fails the test instead of being ignored.
 */
import { isDeepStrictEqual } from "node:util";

export interface PatchOperation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

type Container = Record<string, unknown> | unknown[];

export class PatchError extends Error {}

/** "/a/b~1c/~0d" → ["a", "b/c", "~d"]; "" is the whole document. */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/"))
    throw new PatchError(`pointer must start with '/': ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token))
        throw new PatchError(`bad escape in pointer token ${JSON.stringify(token)}`);
      // ~1 first: "~01" must become "~1", not "/".
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

function isContainer(v: unknown): v is Container {
  return typeof v === "object" && v !== null;
}

/** An array index token: "0" or digits without a leading zero, within the array. */
function arrayIndex(token: string, length: number, allowEnd: boolean): number {
  if (allowEnd && token === "-") return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`not an array index: ${JSON.stringify(token)}`);
  const i = Number(token);
  if (i > length || (!allowEnd && i === length)) throw new PatchError(`array index ${i} out of range`);
  return i;
}

function resolve(doc: unknown, tokens: readonly string[], pointer: string): unknown {
  let cur = doc;
  for (const token of tokens) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(token, cur.length, false)];
    else if (isContainer(cur) && Object.hasOwn(cur, token)) cur = (cur as Record<string, unknown>)[token];
    else throw new PatchError(`path ${pointer} does not exist`);
  }
  return cur;
}

/** The container holding the pointer's last token, and that token. */
function parentOf(doc: unknown, pointer: string): { parent: Container; key: string } {
  const tokens = parsePointer(pointer);
  const key = tokens.pop();
  if (key === undefined) throw new PatchError("the root has no parent");
  const parent = resolve(doc, tokens, pointer);
  if (!isContainer(parent)) throw new PatchError(`parent of ${pointer} is not an object or array`);
  return { parent, key };
}

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === "") return value;
  const { parent, key } = parentOf(doc, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, true), 0, value);
  else parent[key] = value;
  return doc;
}

function remove(doc: unknown, pointer: string): unknown {
  if (pointer === "") throw new PatchError("cannot remove the whole document");
  const { parent, key } = parentOf(doc, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, false), 1);
  else if (Object.hasOwn(parent, key)) delete parent[key];
  else throw new PatchError(`path ${pointer} does not exist`);
  return doc;
}

/** Applies the operations in order to a copy of `doc`; the input is never modified. */
export function applyJsonPatch(doc: unknown, ops: readonly PatchOperation[]): unknown {
  let out = clone(doc);
  for (const [i, o] of ops.entries()) {
    try {
      switch (o.op) {
        case "add":
          if (!("value" in o)) throw new PatchError("add needs a value");
          out = add(out, o.path, clone(o.value));
          break;
        case "remove":
          out = remove(out, o.path);
          break;
        case "replace":
          if (!("value" in o)) throw new PatchError("replace needs a value");
          if (o.path === "") out = clone(o.value);
          else {
            resolve(out, parsePointer(o.path), o.path);
            out = add(remove(out, o.path), o.path, clone(o.value));
          }
          break;
        case "move": {
          if (o.from === undefined) throw new PatchError("move needs from");
          if (o.path !== o.from && o.path.startsWith(`${o.from}/`))
            throw new PatchError("cannot move a value into one of its own children");
          const moved = resolve(out, parsePointer(o.from), o.from);
          out = add(remove(out, o.from), o.path, moved);
          break;
        }
        case "copy": {
          if (o.from === undefined) throw new PatchError("copy needs from");
          out = add(out, o.path, clone(resolve(out, parsePointer(o.from), o.from)));
          break;
        }
        case "test":
          if (!isDeepStrictEqual(resolve(out, parsePointer(o.path), o.path), o.value))
            throw new PatchError(`test failed at ${o.path}`);
          break;
        default:
          throw new PatchError(`unknown op ${JSON.stringify(o.op)}`);
      }
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      throw new PatchError(`operation ${i} (${o.op} ${o.path}): ${why}`);
    }
  }
  return out;
}
