/**
 * Field paths as celgate's diagnostics spell them (`spec.versions[0].schema`, `a["x.y"]`): the
 * spelling src/policy's source maps read back to find where a field was written.
 */
const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Appends a key or an index to a path. */
export function childPath(path: string, segment: string | number): string {
  if (typeof segment === "number") return `${path}[${segment}]`;
  if (!PLAIN_KEY.test(segment)) return `${path}[${JSON.stringify(segment)}]`;
  return path === "" ? segment : `${path}.${segment}`;
}
