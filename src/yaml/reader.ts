/**
 * Reading a YAML document as a schema: typed access to mappings, lists and scalars, where every
 * problem becomes a Diagnostic with its field path (`spec.validations[2].expression`) and
 * file:line:col, and keys a schema does not know are reported. The policy parser and the test-suite
 * parser both read through it; each words its problems its own way (a Wording) and chooses where
 * they are shown (a Locator).
 *
 * Pure: no filesystem. Aliases are resolved wherever a value is read.
 */
import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar } from "yaml";
import { EXACT_YAML_NUMBERS } from "./json-numbers.ts";
import type { Document, Node, YAMLMap, YAMLSeq } from "yaml";
import type { Diagnostic, DiagnosticCode, DiagnosticSeverity, SourceLocation } from "../errors.ts";
import { childPath, resolveAlias, TextPositions, type YamlSourceMap } from "./source-map.ts";

/** A value node, aliases resolved. */
export type YamlNode = Scalar | YAMLMap | YAMLSeq;

/** A value found in a document: the node (aliases resolved), where it is written, and its field path. */
export interface Field {
  readonly node: YamlNode;
  readonly offset: number;
  readonly path: string;
}

/** The shapes the reader checks a value against. */
export type ValueKind = "string" | "boolean" | "mapping" | "list";

/** How a file format words the problems the reader finds. */
export interface Wording {
  /** The code of a value of the wrong type (and of a key the format refuses). */
  readonly typeCode: DiagnosticCode;
  /** "must be a string; got number 3", "expected a list, got a mapping", ... */
  wrongType(expected: ValueKind, got: YamlNode): string;
  /** A list item that is no value at all. */
  readonly missingItem: string;
  /**
   * A mapping key (aliases resolved; `raw` as written, in `doc`) as a field name, or undefined where
   * the format refuses it.
   */
  fieldName(key: YamlNode | undefined, raw: unknown, doc: Document.Parsed): string | undefined;
  /** What is said of a refused key. */
  readonly refusedKey: string;
  readonly unknownFieldCode: DiagnosticCode;
  readonly unknownFieldSeverity: DiagnosticSeverity;
  /** A key outside `known`, in `what` (the structure, as the format names it). */
  unknownField(key: string, known: readonly string[], what: string): string;
}

/** Where problems are shown: at a value (its path and offset) and at a key of a mapping. */
export interface Locator {
  value(path: string, offset: number): SourceLocation;
  key(mapPath: string, key: string, keyOffset: number): SourceLocation;
}

/** Problems shown at the offending node (or key) itself: the policy format's choice. */
export function atNodes(positions: TextPositions): Locator {
  return {
    value: (_path, offset) => positions.at(offset),
    key: (_mapPath, _key, keyOffset) => positions.at(keyOffset),
  };
}

/**
 * Problems shown where the source map finds their path (a value written as nothing points at its
 * key, a missing one at its nearest ancestor), and unknown keys at the first key of that name: the
 * test-suite format's choice, since its later stages find values by path too.
 */
export function byPath(map: YamlSourceMap, doc: Document.Parsed, positions: TextPositions): Locator {
  return {
    value: (path) => map.locate(path),
    key(mapPath, key) {
      const parent = resolveAlias(doc, map.find(mapPath).node);
      if (isMap(parent))
        for (const pair of parent.items) {
          const k = resolveAlias(doc, pair.key);
          if (isScalar(k) && String(k.value) === key && k.range) return positions.at(k.range[0]);
        }
      return map.locate(childPath(mapPath, key));
    },
  };
}

/** The start of a node, or `fallback` when it has no range. */
export function offsetOf(node: Node | null | undefined, fallback: number): number {
  return node?.range ? node.range[0] : fallback;
}

/**
 * Collects the diagnostics of one object and counts its errors, which decide whether the object is
 * kept; reads values with the format's wording.
 */
export class YamlReader {
  errors = 0;
  /** The object the problems belong to (a policy's kind and name), when the format labels them. */
  object: { kind: string; name: string } | undefined;

  constructor(
    readonly doc: Document.Parsed,
    readonly diagnostics: Diagnostic[],
    readonly wording: Wording,
    private readonly locator: Locator,
  ) {}

  locate(path: string, offset: number): SourceLocation {
    return this.locator.value(path, offset);
  }

  locateKey(mapPath: string, key: string, keyOffset: number): SourceLocation {
    return this.locator.key(mapPath, key, keyOffset);
  }

  report(
    code: DiagnosticCode,
    path: string,
    offset: number,
    message: string,
    severity: DiagnosticSeverity = "error",
    location: SourceLocation = this.locator.value(path, offset),
  ): void {
    if (severity === "error") this.errors++;
    this.diagnostics.push({
      code,
      severity,
      message,
      ...(path === "" ? {} : { path }),
      location,
      ...(this.object ? { object: this.object } : {}),
    });
  }

  resolve(node: unknown): YamlNode | undefined {
    const n = resolveAlias(this.doc, node);
    return isScalar(n) || isMap(n) || isSeq(n) ? n : undefined;
  }

  private wrongType(f: Field, expected: ValueKind): void {
    this.report(this.wording.typeCode, f.path, f.offset, this.wording.wrongType(expected, f.node));
  }

  string(f: Field): string | undefined {
    if (isScalar(f.node) && typeof f.node.value === "string") return f.node.value;
    this.wrongType(f, "string");
    return undefined;
  }

  boolean(f: Field): boolean | undefined {
    if (isScalar(f.node) && typeof f.node.value === "boolean") return f.node.value;
    this.wrongType(f, "boolean");
    return undefined;
  }

  mapping(f: Field): YamlMap | undefined {
    if (isMap(f.node)) return new YamlMap(this, f.node, f.path, f.offset);
    this.wrongType(f, "mapping");
    return undefined;
  }

  /** The items of a list; a null item is kept as a null scalar so the item's reader reports it. */
  list(f: Field): Field[] | undefined {
    if (!isSeq(f.node)) {
      this.wrongType(f, "list");
      return undefined;
    }
    const out: Field[] = [];
    f.node.items.forEach((item, i) => {
      const node = this.resolve(item);
      const path = childPath(f.path, i);
      const offset = offsetOf(item as Node | null, f.offset);
      if (node) out.push({ node, offset, path });
      else this.report(this.wording.typeCode, path, offset, this.wording.missingItem);
    });
    return out;
  }
}

const NULL = new Scalar(null);

interface Entry {
  readonly keyOffset: number;
  readonly value: unknown;
}

/** A YAML mapping read as a struct: its fields by name, with where each key is written. */
export class YamlMap {
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly r: YamlReader,
    readonly node: YAMLMap,
    readonly path: string,
    readonly offset: number,
  ) {
    for (const pair of node.items) {
      const keyOffset = offsetOf(pair.key as Node | null, offset);
      const name = r.wording.fieldName(r.resolve(pair.key), pair.key, r.doc);
      if (name === undefined) {
        r.report(r.wording.typeCode, path, keyOffset, r.wording.refusedKey);
        continue;
      }
      // A later key of the same name wins, as in the decoded object.
      this.entries.set(name, { keyOffset, value: pair.value });
    }
  }

  child(key: string): string {
    return childPath(this.path, key);
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  keyOffset(key: string): number {
    return this.entries.get(key)?.keyOffset ?? this.offset;
  }

  /** The field as written, a null value included; undefined only when the key is absent. */
  get(key: string): Field | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // A key with no value node at all (`{a}`) holds null, as in the decoded object.
    const node = this.r.resolve(entry.value) ?? NULL;
    return { node, offset: offsetOf(entry.value as Node | null, entry.keyOffset), path: this.child(key) };
  }

  /** The field's value, or undefined when the key is absent or its value is null (as Go's decoder reads it). */
  field(key: string): Field | undefined {
    const f = this.get(key);
    return f && !(isScalar(f.node) && f.node.value === null) ? f : undefined;
  }

  /** A string field; absent or null reads as undefined. */
  string(key: string): string | undefined {
    const f = this.field(key);
    return f ? this.r.string(f) : undefined;
  }

  /** A mapping field; absent or null reads as undefined. */
  map(key: string): YamlMap | undefined {
    const f = this.field(key);
    return f ? this.r.mapping(f) : undefined;
  }

  /** A list field's items; absent or null reads as undefined. */
  list(key: string): Field[] | undefined {
    const f = this.field(key);
    return f ? this.r.list(f) : undefined;
  }

  /** Reports the keys outside `known`, in the structure `what` names. */
  known(known: readonly string[], what = ""): void {
    const w = this.r.wording;
    for (const [key, entry] of this.entries) {
      if (known.includes(key)) continue;
      const path = this.child(key);
      this.r.report(
        w.unknownFieldCode,
        path,
        entry.keyOffset,
        w.unknownField(key, known, what),
        w.unknownFieldSeverity,
        this.r.locateKey(this.path, key, entry.keyOffset),
      );
    }
  }
}

/** Parses a file's text into its documents, with the positions every diagnostic is located by. */
export function readDocuments(
  text: string,
  file: string,
): { docs: Document.Parsed[]; positions: TextPositions } {
  const lineCounter = new LineCounter();
  const positions = new TextPositions(file, lineCounter, text);
  const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: true, ...EXACT_YAML_NUMBERS });
  return { docs: Array.isArray(parsed) ? parsed : [], positions };
}
