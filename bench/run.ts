/**
 * `npm run bench`: every benchmark in turn, each printing its own table with its baseline measured
 * in the same run. Exits non-zero only when a correctness gate fails, never on timings.
 * `npm run bench -- cel` or `-- webhook` runs one of them; other arguments go to the CEL benchmark.
 */
import { main as celMain } from "./cel.ts";
import { main as webhookMain } from "./webhook.ts";

const argv = process.argv.slice(2);
const only = argv[0] === "cel" || argv[0] === "webhook" ? argv[0] : undefined;
const rest = only ? argv.slice(1) : argv;
let exitCode = 0;

if (only !== "webhook") {
  console.log("== CEL evaluation ==");
  exitCode ||= celMain(rest);
}
if (only !== "cel") {
  console.log("\n== Webhook over TLS (autocannon, loopback) ==");
  exitCode ||= await webhookMain(only === "webhook" ? rest : []);
}

process.exitCode = exitCode;
