// The registry these machines reach serves only the Linux builds of packages with per-platform
// optional dependencies (Biome's CLI), so npm writes a lock whose optionalDependencies name
// packages the lock does not contain, and `npm ci` then refuses it. This drops those dangling
// names. Run it after changing dependencies: `npm run lock`.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages ?? {};
const dropped = [];
for (const [name, entry] of Object.entries(packages)) {
  const optional = entry.optionalDependencies;
  if (!optional) continue;
  for (const dep of Object.keys(optional)) {
    if (!(`node_modules/${dep}` in packages) && !(`${name}/node_modules/${dep}` in packages)) {
      delete optional[dep];
      dropped.push(`${name} → ${dep}`);
    }
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  dropped.length
    ? `dropped ${dropped.length} dangling optional dependencies:\n  ${dropped.join("\n  ")}`
    : "lock file is consistent",
);
