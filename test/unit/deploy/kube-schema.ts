/**
 * Offline checks of Kubernetes objects against the API's own schemas, from the kubernetes-models
 * package (generated from the Kubernetes OpenAPI document):
 *
 * - `validateAgainstSchema`: the package's JSON-schema validators (types, enums, required fields,
 *   formats) for the object's apiVersion and kind;
 * - `unknownFields`: those validators accept fields the API does not know (the OpenAPI schemas
 *   leave additionalProperties open), and a misspelt field is the commonest manifest bug, which the
 *   API server would drop or, with strict field validation, reject. So the objects are also
 *   type-checked as object literals against the package's TypeScript interfaces, whose excess
 *   property checks catch unknown fields at every depth.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export type KubeObject = { apiVersion: string; kind: string } & Record<string, unknown>;

/** `apps/v1` + `Deployment` → `kubernetes-models/apps/v1/Deployment` (core `v1` is `kubernetes-models/v1`). */
function modulePath(o: KubeObject): string {
  return `kubernetes-models/${o.apiVersion}/${o.kind}`;
}

interface ModelClass {
  new (data: unknown): { validate(): void };
}

/** Throws the validator's message when the object does not match its schema. */
export async function validateAgainstSchema(o: KubeObject): Promise<void> {
  const mod = (await import(modulePath(o))) as Record<string, ModelClass | undefined>;
  const Model = mod[o.kind];
  if (!Model) throw new Error(`no schema for ${o.apiVersion} ${o.kind}`);
  new Model(o).validate();
}

export interface Labeled {
  readonly label: string;
  readonly object: KubeObject;
}

/**
 * Type-checks each object against its kind's interface; returns one message per problem, naming
 * the object's label. Objects of kinds the package does not model must be left out by the caller.
 */
export function unknownFields(objects: readonly Labeled[]): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  // A file that does not exist on disk, placed here so that `kubernetes-models` resolves from the
  // project's node_modules.
  const virtual = join(here, "__deploy_manifests__.ts");
  const ranges: { label: string; start: number; end: number }[] = [];
  let text = "";
  objects.forEach(({ object }, i) => {
    text += `import type { I${object.kind} as T${i} } from "${modulePath(object)}";\n`;
  });
  objects.forEach(({ label, object }, i) => {
    const start = text.length;
    text += `export const object${i}: T${i} = ${JSON.stringify(object, null, 2)};\n`;
    ranges.push({ label, start, end: text.length });
  });

  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    fileName === virtual
      ? ts.createSourceFile(fileName, text, languageVersion, true)
      : getSourceFile(fileName, languageVersion, ...rest);
  host.fileExists = (fileName) => fileName === virtual || fileExists(fileName);
  host.readFile = (fileName) => (fileName === virtual ? text : readFile(fileName));

  const program = ts.createProgram({ rootNames: [virtual], options, host });
  const source = program.getSourceFile(virtual);
  const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  return diagnostics.map((d) => {
    const at = d.start ?? 0;
    const label = ranges.find((r) => at >= r.start && at < r.end)?.label ?? "imports";
    const line = source && d.start !== undefined ? source.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${label}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")} (generated line ${line})`;
  });
}
