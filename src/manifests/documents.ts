/**
 * The Kubernetes objects of a YAML or JSON file, each with where its fields were written: documents
 * split on `---`, and `List` documents (`kubectl get -o yaml` prints one) opened into their items.
 * Duplicate keys are errors, as in the API server's strict decoder.
 */
import { isMap, isSeq, LineCounter, type Node, parseAllDocuments } from "yaml";
import type { Diagnostic, SourceLocation } from "../errors.ts";
import { aliasExcessMessage, checkAliases } from "../yaml/aliases.ts";
import { resolveAlias, TextPositions, YamlSourceMap } from "../yaml/source-map.ts";

export interface SourceObject {
  /** The object as JSON. */
  readonly value: Readonly<Record<string, unknown>>;
  /** The kind of the List that held it, when it came in one. */
  readonly list?: { readonly apiVersion: string; readonly kind: string };
  /** Where a field path of this object (`webhooks[0].name`) was written. */
  locate(path: string): SourceLocation;
  /** The first and last line the object spans. */
  readonly lines: readonly [number, number];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads every object of a file's text. Never throws; YAML errors become diagnostics. */
export function readObjects(
  text: string,
  file: string,
): { readonly objects: readonly SourceObject[]; readonly diagnostics: readonly Diagnostic[] } {
  const lineCounter = new LineCounter();
  const positions = new TextPositions(file, lineCounter, text);
  const objects: SourceObject[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const doc of parseAllDocuments(text, { lineCounter })) {
    if (doc.errors.length > 0) {
      for (const e of doc.errors)
        diagnostics.push({
          code: "PE_YAML_SYNTAX",
          severity: "error",
          // yaml ends its messages in " at line L, column C:" and a code frame; the location travels apart.
          message: (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, ""),
          location: positions.at(e.pos[0]),
        });
      continue;
    }
    const root = resolveAlias(doc, doc.contents) as Node | null;
    if (root === null || root === undefined) continue;
    const excess = checkAliases(doc);
    if (excess !== undefined) {
      diagnostics.push({
        code: "PE_YAML_ALIASES",
        severity: "error",
        message: aliasExcessMessage(excess),
        location: positions.at(excess.alias.range?.[0] ?? 0),
      });
      continue;
    }
    // Bounded by checkAliases above, by Kubernetes' rule rather than the yaml package's fixed count.
    const value: unknown = doc.toJS({ maxAliasCount: -1 });
    if (value === null || value === undefined) continue;
    const add = (node: Node, v: unknown, list?: SourceObject["list"]) => {
      const map = new YamlSourceMap(positions, doc, node);
      const range = node.range ?? [0, 0, 0];
      objects.push({
        value: isRecord(v) ? v : {},
        ...(list ? { list } : {}),
        locate: (path) => map.locate(path),
        lines: [positions.at(range[0]).line, positions.at(Math.max(range[0], range[1] - 1)).line],
      });
    };
    const itemsNode = isMap(root) ? resolveAlias(doc, root.get("items", true)) : undefined;
    if (
      isRecord(value) &&
      Array.isArray(value.items) &&
      String(value.kind ?? "").endsWith("List") &&
      isSeq(itemsNode)
    ) {
      const list = { apiVersion: String(value.apiVersion ?? ""), kind: String(value.kind) };
      value.items.forEach((item, i) => {
        const node = resolveAlias(doc, itemsNode.items[i]) as Node;
        add(node, item, list);
      });
    } else add(root, value);
  }
  return { objects, diagnostics };
}
