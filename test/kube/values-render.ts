/**
 * A CEL expression that renders any value as one line of text with its type, so that two CEL
 * implementations' values compare as strings: `i7` (int), `u7` (uint), `f2.5` (double), a quoted
 * string, `b6162` (bytes, hex), `true`, `null`, `D90s` (duration), `T2020-01-01T00:00:00Z`
 * (timestamp), `t:int` (a type), `[a, b]` (a list), `{k: v}` (a map, entries sorted by their
 * rendering, as map order is unspecified), `opt(v)` / `opt()` (an optional); anything else (a
 * Kubernetes library value such as a quantity) is `other`.
 *
 * It is written in CEL rather than done in TypeScript because the API server gives back only
 * strings: an audit annotation's valueExpression must be a string or null (validating/validator.go),
 * so both sides run this same text, and a difference in any function it calls shows as a difference.
 * It never puts a line break in its result (strings are quoted with `strings.quote`).
 *
 * Nesting is rendered to `depth` levels; below that a list or map shows only its size, so the
 * text stays bounded (each level holds the one below twice).
 */

const TYPE_NAMES = [
  "int",
  "uint",
  "double",
  "string",
  "bool",
  "bytes",
  "list",
  "map",
  "null_type",
  "type",
  "google.protobuf.Duration",
  "google.protobuf.Timestamp",
  "optional_type",
] as const;

/** The branches for a scalar `x` (a dyn-typed name); `types` adds the names of type values. */
function scalarBranches(x: string, types: boolean): string[] {
  const t = `type(${x})`;
  const typeName = TYPE_NAMES.map((n) => `${x} == ${n} ? '${n}' : `).join("");
  return [
    `${t} == int ? 'i' + string(${x})`,
    `${t} == uint ? 'u' + string(${x})`,
    `${t} == double ? 'f' + string(${x})`,
    `${t} == string ? strings.quote(${x})`,
    `${t} == bool ? string(${x})`,
    `${t} == bytes ? 'b' + '%x'.format([${x}])`,
    `${t} == null_type ? 'null'`,
    `${t} == google.protobuf.Duration ? 'D' + string(${x})`,
    `${t} == google.protobuf.Timestamp ? 'T' + string(${x})`,
    types ? `${t} == type ? 't:' + (${typeName}'other')` : `${t} == type ? 't'`,
  ];
}

/** A map key (int, uint, string or bool). */
function renderKey(k: string): string {
  return `(type(${k}) == string ? strings.quote(${k}) : type(${k}) == int ? 'i' + string(${k}) : type(${k}) == uint ? 'u' + string(${k}) : string(${k}))`;
}

function render(x: string, depth: number, top: boolean): string {
  const t = `type(${x})`;
  const branches = scalarBranches(x, top);
  if (depth <= 0) {
    branches.push(`${t} == list ? '[#' + string(size(${x})) + ']'`);
    branches.push(`${t} == map ? '{#' + string(size(${x})) + '}'`);
  } else {
    const e = `e${depth}`;
    const k = `k${depth}`;
    branches.push(`${t} == list ? '[' + ${x}.map(${e}, ${render(e, depth - 1, false)}).join(', ') + ']'`);
    branches.push(
      `${t} == map ? '{' + ${x}.map(${k}, ${renderKey(k)} + ': ' + ${render(`${x}[${k}]`, depth - 1, false)}).sort().join(', ') + '}'`,
    );
  }
  return `(${branches.map((b) => `${b} : `).join("")}'other')`;
}

/**
 * The rendering of `expression`'s value, `depth` levels deep. The value is bound once to a dyn
 * comprehension variable, so the checker accepts every branch whatever the expression's type and
 * the expression is evaluated once. An optional is unwrapped first (tagged `o`, `n` for none, `v`
 * for a plain value) so that its content is rendered by the same text rather than a copy of it.
 */
export function renderExpression(expression: string, depth = 2): string {
  const tagged =
    `[dyn(${expression})].map(w, type(w) == optional_type ? ` +
    `(w.hasValue() ? [dyn('o'), dyn(w.value())] : [dyn('n'), dyn(null)]) : [dyn('v'), w])[0]`;
  return (
    `[${tagged}].map(p, p[0] == 'n' ? 'opt()' : ` +
    `(p[0] == 'o' ? 'opt(' : '') + [p[1]].map(v0, ${render("v0", depth, true)})[0] + (p[0] == 'o' ? ')' : ''))[0]`
  );
}
