/**
 * How far a YAML document's aliases expand, judged as Kubernetes judges it. An alias is a
 * reference: a document of a few lines can stand for millions of nodes once its aliases are
 * expanded (a "billion laughs"), and whatever later walks the decoded value (a deep copy, a JSON
 * encoding, CEL reading params) walks the expansion. The yaml package stops at a fixed count of
 * alias uses, 100 by default, which refuses ordinary files (a label map used 101 times) and throws
 * where the parser promises not to.
 *
 * The rule is go-yaml's, which the API server and kubectl decode YAML with (sigs.k8s.io/yaml):
 * gopkg.in/yaml.v2 decode.go, `(*decoder).unmarshal` and `allowedAliasRatio`. Every node decoded
 * counts once, nodes reached through an alias count as alias-driven, and a document fails once
 * more than 100 alias-driven nodes and more than 1,000 nodes in all have been decoded with the
 * alias-driven share above 99% (up to 400,000 nodes), falling to 10% (from 4,000,000 nodes). So
 * the expansion of any document that passes is bounded, and a plain file is never refused however
 * many aliases it uses.
 *
 * Counting costs one visit per node of the text: each anchored node's expanded size is computed
 * once and reused at every alias to it.
 */
import { type Alias, type Document, isAlias, isMap, isPair, isSeq, type Node } from "yaml";

const RATIO_RANGE_LOW = 400_000;
const RATIO_RANGE_HIGH = 4_000_000;
const MIN_ALIAS_DRIVEN = 100;
const MIN_DECODED = 1000;

/** The share of decoded nodes that may come from aliases, by how many have been decoded (go-yaml's). */
export function allowedAliasRatio(decoded: number): number {
  if (decoded <= RATIO_RANGE_LOW) return 0.99;
  if (decoded >= RATIO_RANGE_HIGH) return 0.1;
  return 0.99 - (0.89 * (decoded - RATIO_RANGE_LOW)) / (RATIO_RANGE_HIGH - RATIO_RANGE_LOW);
}

/** Why a document's aliases are refused, and the alias where that was decided. */
export interface AliasExcess {
  readonly alias: Alias;
  readonly reason: "excessive" | "cycle";
  /** Nodes decoded, and of them alias-driven, up to and including this alias's expansion. */
  readonly decoded: number;
  readonly aliasDriven: number;
}

/** Thrown inside the walk only, and caught by checkAliases. */
class Stop {
  constructor(readonly excess: AliasExcess) {}
}

/**
 * Walks `doc` in document order as a decoder would, without expanding anything; returns where its
 * aliases expand too far (or an alias inside the node it refers to), or undefined when they do not.
 * Aliases to no anchor are not judged here (the parser reports them).
 */
export function checkAliases(doc: Document.Parsed): AliasExcess | undefined {
  const sizes = new Map<unknown, number>();
  const open = new Set<unknown>();
  let decoded = 0;
  let aliasDriven = 0;
  /** The last alias expanded: where a literal node that tips the share is reported. */
  let lastAlias: Alias | undefined;

  const target = (alias: Alias): Node | undefined => alias.resolve(doc) as Node | undefined;

  /** Nodes a decoder visits for `node` with every alias expanded; memoised per node. */
  const size = (node: unknown, via: Alias): number => {
    if (node === null || node === undefined) return 0;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (open.has(node)) throw new Stop({ alias: via, reason: "cycle", decoded, aliasDriven });
    open.add(node);
    let n = 1;
    if (isAlias(node)) n += size(target(node), node);
    else if (isMap(node) || isSeq(node))
      for (const item of node.items)
        n += isPair(item) ? size(item.key, via) + size(item.value, via) : size(item, via);
    open.delete(node);
    sizes.set(node, n);
    return n;
  };

  const excessive = (): boolean =>
    aliasDriven > MIN_ALIAS_DRIVEN &&
    decoded > MIN_DECODED &&
    aliasDriven / decoded > allowedAliasRatio(decoded);

  const walk = (node: unknown): void => {
    if (node === null || node === undefined) return;
    decoded++;
    // Past an expansion the share falls, but so does the bound, and it can fall faster.
    if (lastAlias !== undefined && excessive())
      throw new Stop({ alias: lastAlias, reason: "excessive", decoded, aliasDriven });
    if (isAlias(node)) {
      lastAlias = node;
      const to = target(node);
      if (to === undefined) return;
      open.add(node);
      const expanded = size(to, node);
      open.delete(node);
      decoded += expanded;
      aliasDriven += expanded;
      // Within one expansion both counts grow together, so the share only rises and the bound
      // only falls: checking once at its end decides as checking at each of its nodes would.
      if (excessive()) throw new Stop({ alias: node, reason: "excessive", decoded, aliasDriven });
      return;
    }
    if (isMap(node) || isSeq(node)) {
      // The collection is open while its items are walked, so an alias inside it to it is a cycle.
      open.add(node);
      for (const item of node.items) {
        if (isPair(item)) {
          walk(item.key);
          walk(item.value);
        } else walk(item);
      }
      open.delete(node);
    }
  };

  try {
    walk(doc.contents);
  } catch (e) {
    if (e instanceof Stop) return e.excess;
    throw e;
  }
  return undefined;
}

/** The diagnostic message for an AliasExcess, naming the alias. */
export function aliasExcessMessage(excess: AliasExcess): string {
  if (excess.reason === "cycle")
    return `alias *${excess.alias.source} refers to a node that contains it; a value cannot hold itself`;
  return `the document's aliases expand too far: ${excess.aliasDriven} of the ${excess.decoded} nodes decoded by alias *${excess.alias.source} come from aliases, over the share Kubernetes' YAML decoder allows (${Math.round(allowedAliasRatio(excess.decoded) * 100)}%); write the repeated parts out, or use fewer aliases`;
}
