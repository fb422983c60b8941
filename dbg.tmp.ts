import { join } from "node:path";
import { fileSuiteReader } from "./src/sources/suites.ts";
import { runSuiteFile } from "./src/suite/run.ts";
const F = "/work/wt-wp11merge/test/fixtures/suites";
const r = await runSuiteFile(join(F, process.argv[2] ?? "broken/fields.test.yaml"), fileSuiteReader);
console.log(r.diagnostics.map((d) => `${d.code} ${d.severity} ${d.path} ${d.message}`).join("\n"));
