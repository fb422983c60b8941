/**
 * `npm run bench`: every benchmark in turn, each printing its own table. Today only the CEL evaluation
 * benchmark; the webhook (HTTP) benchmark is to be added here. Arguments are passed on
 * (`npm run bench -- --pods 500 --rounds 7`).
 */
import { main as celMain } from "./cel.ts";

const argv = process.argv.slice(2);
let exitCode = 0;

console.log("== CEL evaluation ==");
exitCode ||= celMain(argv);

process.exitCode = exitCode;
