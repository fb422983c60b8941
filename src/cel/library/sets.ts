/**
 * cel-go's sets extension (ext/sets.go): lists used as sets, compared with CEL equality, so
 * `sets.contains([1, 2.0, 3u], [1.0, 2u, 3])` is true. Duplicates and order do not matter.
 *
 * Cost: the product of the two sizes (twice that for equivalent, which may compare both ways), on
 * top of the base cost of 1, as cel-go's trackers charge it.
 */
import { celEquals } from "../runtime/equality.ts";
import type { CelList, CelValue } from "../runtime/values.ts";
import { fn, globalFn, type Library } from "./types.ts";

function has(list: CelList, item: CelValue): boolean {
  for (const v of list) if (celEquals(item, v)) return true;
  return false;
}

/** Every element of `sub` is in `list`; true for an empty `sub`. */
function contains(list: CelList, sub: CelList): boolean {
  for (const v of sub) if (!has(list, v)) return false;
  return true;
}

function equivalent(a: CelList, b: CelList): boolean {
  return contains(a, b) && contains(b, a);
}

/** Some element of `a` is in `b`; false if either is empty. */
function intersects(a: CelList, b: CelList): boolean {
  for (const v of a) if (has(b, v)) return true;
  return false;
}

const productCost =
  (factor: number) =>
  (a: CelList, b: CelList): number =>
    Math.floor(a.length * b.length * factor);

export const setsLibrary: Library = {
  name: "cel.lib.ext.sets",
  availability: "kubernetes",
  functions: [
    fn(
      "sets.contains",
      globalFn("list_sets_contains_list", ["list", "list"], "bool", contains, productCost(1)),
    ),
    fn(
      "sets.equivalent",
      globalFn("list_sets_equivalent_list", ["list", "list"], "bool", equivalent, productCost(2)),
    ),
    fn(
      "sets.intersects",
      globalFn("list_sets_intersects_list", ["list", "list"], "bool", intersects, productCost(1)),
    ),
  ],
};
