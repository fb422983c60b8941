/**
 * The one-way flow is enforced by `npm run lint` (biome.json: `noImportCycles`, and per-folder
 * `noRestrictedImports`), not hoped for. This runs Biome with the repository's configuration over a
 * tree of probe files, each making one import, and checks which ones it rejects: a config that
 * stopped enforcing a rule fails here, not silently.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** Probe file (under src/) → the import it makes → whether the lint must reject it. */
const PROBES: readonly (readonly [string, string, boolean])[] = [
  // Core stages do no I/O and serve nothing.
  ["engine/p1.ts", "fastify", true],
  ["match/p1.ts", "node:fs/promises", true],
  ["compile/p1.ts", "prom-client", true],
  ["policy/p1.ts", "pino", true],
  ["suite/p1.ts", "node:http", true],
  ["cel/p1.ts", "node:net", true],
  ["manifests/p1.ts", "node:tls", true],
  ["request/p1.ts", "node:https", true],
  // …and never import an adapter.
  ["engine/p2.ts", "../adapters/server/admitter.ts", true],
  ["suite/p2.ts", "../adapters/output/results.ts", true],
  ["cel/library/p2.ts", "../../adapters/input/documents.ts", true],
  // A folder imports only from the stages before it.
  ["policy/p3.ts", "../compile/policy.ts", true],
  ["match/p3.ts", "../engine/types.ts", true],
  ["compile/p3.ts", "../engine/admit.ts", true],
  ["engine/p3.ts", "../suite/run.ts", true],
  ["request/p3.ts", "../match/index.ts", true],
  ["engine/p4.ts", "../compile/policy.ts", false],
  ["engine/p5.ts", "../request/types.ts", false],
  ["compile/p4.ts", "../match/index.ts", false],
  ["suite/p4.ts", "../engine/admit.ts", false],
  ["errors.ts", "./engine/types.ts", true],
  ["result.ts", "./policy/types.ts", true],
  // Only src/cel imports the CEL library.
  ["engine/p6.ts", "@bufbuild/cel", true],
  ["adapters/cli/p6.ts", "@bufbuild/cel", true],
  ["cel/p6.ts", "@bufbuild/cel", false],
  // Adapters: the CLI starts the REPL and the server, never the other way round.
  ["adapters/repl/p7.ts", "../cli/main.ts", true],
  ["adapters/server/p7.ts", "../repl/session.ts", true],
  ["adapters/output/p7.ts", "../server/http.ts", true],
  ["adapters/cli/p7.ts", "../../repl/session.ts", false],
  ["adapters/repl/p8.ts", "../output/results.ts", false],
  ["adapters/server/p8.ts", "fastify", false],
  // The cluster link is an I/O stage after the core: it may use the network, prom-client and the
  // Kubernetes client, the core never imports it or that client, and it never imports an adapter.
  ["engine/p7.ts", "../cluster/link.ts", true],
  ["sources/p7.ts", "../cluster/state.ts", true],
  ["suite/p7.ts", "../cluster/reviews.ts", true],
  ["match/p7.ts", "@kubernetes/client-node", true],
  ["cluster/p1.ts", "../adapters/server/admitter.ts", true],
  ["cluster/p2.ts", "fastify", true],
  ["cluster/p3.ts", "@bufbuild/cel", true],
  ["cluster/p4.ts", "../engine/context.ts", false],
  ["cluster/p5.ts", "../sources/files.ts", false],
  ["cluster/p6.ts", "@kubernetes/client-node", false],
  ["cluster/p7.ts", "prom-client", false],
  ["cluster/p8.ts", "node:https", false],
  ["adapters/server/p9.ts", "../../cluster/link.ts", false],
  // The library API is the core and the file loader, with no server in it.
  ["index.ts", "./adapters/server/server.ts", true],
];

interface Diagnostic {
  readonly category: string;
  readonly location?: { readonly path?: string | { readonly file: string } };
}

void test("npm run lint rejects imports against the flow, and file-level import cycles", () => {
  const dir = mkdtempSync(join(tmpdir(), "celgate-layers-"));
  try {
    const config = JSON.parse(readFileSync(join(root, "biome.json"), "utf8")) as Record<string, unknown>;
    delete config.$schema;
    writeFileSync(join(dir, "biome.json"), JSON.stringify(config));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(dir, "src", path)), { recursive: true });
      writeFileSync(join(dir, "src", path), text);
    };
    for (const [file, spec] of PROBES)
      write(file, `import * as probe from "${spec}";\n\nexport const p = probe;\n`);
    // Two files that import each other.
    write("cel/cycle-a.ts", 'import { b } from "./cycle-b.ts";\n\nexport const a = (): unknown => b;\n');
    write("cel/cycle-b.ts", 'import { a } from "./cycle-a.ts";\n\nexport const b = (): unknown => a;\n');

    const biome = join(root, "node_modules", "@biomejs", "biome", "bin", "biome");
    const run = spawnSync(
      process.execPath,
      [biome, "lint", "--reporter=json", "--max-diagnostics=none", "."],
      {
        cwd: dir,
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    const report = JSON.parse(run.stdout) as { diagnostics: Diagnostic[] };
    const found = new Set(
      report.diagnostics
        .filter((d) => d.category.startsWith("lint/"))
        .map((d) => {
          const path = d.location?.path;
          const file = typeof path === "string" ? path : (path?.file ?? "");
          return `${d.category} ${file.replace(/\\/g, "/").replace(/^src\//, "")}`;
        }),
    );
    const expected = new Set([
      ...PROBES.filter(([, , rejected]) => rejected).map(
        ([file]) => `lint/style/noRestrictedImports ${file}`,
      ),
      "lint/suspicious/noImportCycles cel/cycle-a.ts",
      "lint/suspicious/noImportCycles cel/cycle-b.ts",
    ]);
    assert.deepEqual([...found].sort(), [...expected].sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
