/**
 * A CEL expression that renders a value as text with its type, so that two CEL implementations'
 * values compare as strings: `<type>|<value>|<element types>`, e.g. `uint|3|[]`,
 * `list|[1, 2.500000]|[int, double]`, `optional_type|7|[]` (an optional shows its value, or
 * `<none>`).
 *
 * It is written in CEL rather than done in TypeScript because the API server gives back only
 * strings: an audit annotation's valueExpression must be a string or null (validating/validator.go),
 * so both sides run this same text, and a difference in any function it calls shows as a
 * difference. The value is printed by the strings extension's `%s` (cel-go ext/formatting.go:
 * lists and maps recursively, map entries sorted by key, strings and bytes quoted inside them,
 * doubles inside them with six decimals), which does not tell int from uint inside a list or map:
 * the third part gives a list's element types for that. A value `%s` cannot print (a Kubernetes
 * library value such as a quantity) makes the rendering fail, on both sides alike.
 *
 * It is kept small on purpose: the API server takes no expression over 5120 bytes, and a nest of
 * conditionals (a renderer written as a ternary chain per type and level) took it tens of
 * milliseconds per expression to compile, where this takes well under one.
 */
export function renderExpression(expression: string): string {
  const x = expression;
  return (
    `'%s|%s|%s'.format([type(${x}), ` +
    `type(${x}) == optional_type ? dyn(dyn(${x}).orValue('<none>')) : dyn(${x}), ` +
    `type(${x}) == list ? dyn(${x}).map(e, type(e)) : []])`
  );
}
