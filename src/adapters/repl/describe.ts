/** How the REPL names what is bound: documents by kind and name, commands by their usage. */
import { typeName, toCel } from "../../cel/index.ts";
import { isJsonObject } from "../input/documents.ts";

/** A document loaded from a file, and where from (shown by `:vars`). */
export interface Loaded {
  readonly value: unknown;
  readonly file: string;
}

type JsonObject = Record<string, unknown>;

/** The command that binds an admission variable, for the error that says to use it. */
export function bindingCommand(name: string): string {
  return (
    { object: "object FILE", oldObject: "old FILE", request: "request FILE", params: "params FILE" }[name] ??
    "namespace FILE"
  );
}

/** An expression on one line, as `:cost` and `:explain` repeat it. */
export function oneLine(s: string): string {
  return s.trim().replace(/\s*\n\s*/g, " ");
}

/** `Pod default/web`, or the type of a document that is not a Kubernetes object. */
export function describeDocument(v: unknown): string {
  if (isJsonObject(v) && typeof v.kind === "string") {
    const meta = isJsonObject(v.metadata) ? (v.metadata as JsonObject) : {};
    const ns = typeof meta.namespace === "string" && meta.namespace ? `${meta.namespace}/` : "";
    const name = typeof meta.name === "string" ? meta.name : "(no name)";
    return `${v.kind} ${ns}${name}`;
  }
  return `a ${typeName(toCel(v))}`;
}

/** What `:vars` shows for a binding: the document and its file, or null. */
export function loadedLine(l: Loaded | undefined): string {
  return l ? `${describeDocument(l.value)} (from ${l.file})` : "null";
}
