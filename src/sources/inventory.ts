/**
 * What a policy set holds, object by object, so that a reload can say what it adds, removes and
 * changes, and the store can see a reload that would remove something the serving set enforces.
 * Policies, bindings and the other objects of the files (params, Namespaces) all count: losing a
 * param or a Namespace changes decisions as surely as losing a policy.
 */
import { createHash } from "node:crypto";
import type { PolicySet } from "../policy/types.ts";
import { stringifyJson } from "../request/json-deep.ts";
import type { Pause } from "./slices.ts";

/** One object of a set: `Kind/name`, or `Kind/namespace/name` for a namespaced object. */
export interface InventoryEntry {
  readonly key: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  /** The file that defines it. */
  readonly file: string;
  /** A hash of what the object says, its place in the file left out: an edit elsewhere changes nothing. */
  readonly digest: string;
}

/** Entries by key, in the set's order. */
export type Inventory = ReadonlyMap<string, InventoryEntry>;

export interface InventoryChanges {
  readonly added: readonly InventoryEntry[];
  readonly removed: readonly InventoryEntry[];
  readonly changed: readonly InventoryEntry[];
}

/**
 * JSON of a parsed object without its source map: the map holds positions, which move when a line
 * is added above the object. Only the top level's `source` is the map; a field of that name deeper
 * down (a param's data) is the user's and counts.
 */
function digestOf(object: object): string {
  // stringifyJson: a param read from YAML may hold an int64 beyond 2^53 (a bigint).
  const { source: _source, ...rest } = object as { source?: unknown };
  const json = stringifyJson(rest);
  return createHash("sha256").update(json).digest("hex");
}

interface Named {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly source: { readonly file: string };
}

/** The inventory of a parsed set. A name defined twice is an error the loader reports; the first one is kept here. */
export function inventoryOf(set: PolicySet): Inventory {
  const out = new Map<string, InventoryEntry>();
  const add = adder(out);
  for (const p of set.policies) add(p);
  for (const b of set.bindings) add(b);
  for (const r of set.resources) add(r);
  return out;
}

/** inventoryOf, asking `pause` after each object (a promise it returns is waited for; slices.ts). */
export async function inventoryOfSliced(set: PolicySet, pause: Pause): Promise<Inventory> {
  const out = new Map<string, InventoryEntry>();
  const add = adder(out);
  for (const o of [...set.policies, ...set.bindings, ...set.resources]) {
    add(o);
    await pause();
  }
  return out;
}

function adder(out: Map<string, InventoryEntry>): (o: Named) => void {
  const add = (o: Named): void => {
    const key = o.namespace === undefined ? `${o.kind}/${o.name}` : `${o.kind}/${o.namespace}/${o.name}`;
    if (out.has(key)) return;
    out.set(key, {
      key,
      kind: o.kind,
      name: o.name,
      ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
      file: o.source.file,
      digest: digestOf(o),
    });
  };
  return add;
}

/** What `after` adds to, removes from and changes in `before`; each list in its set's order. */
export function compareInventories(before: Inventory, after: Inventory): InventoryChanges {
  const added: InventoryEntry[] = [];
  const changed: InventoryEntry[] = [];
  for (const [key, entry] of after) {
    const old = before.get(key);
    if (old === undefined) added.push(entry);
    else if (old.digest !== entry.digest) changed.push(entry);
  }
  const removed = [...before.values()].filter((e) => !after.has(e.key));
  return { added, removed, changed };
}
