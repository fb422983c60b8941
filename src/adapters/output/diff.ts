/** A line diff for people: what a mutation changed, shown as `-`/`+` lines with a little context. */

/** Beyond this many line pairs the LCS table is too big to be worth it; the caller shows the patch instead. */
const MAX_CELLS = 4_000_000;

/**
 * Diffs two texts line by line (longest common subsequence). Returns the changed lines prefixed
 * `- ` and `+ `, `context` unchanged lines around each change prefixed `  `, and `  ...` where
 * unchanged lines are left out; `undefined` when the texts are too large to diff.
 */
export function lineDiff(before: string, after: string, context = 2): string[] | undefined {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.at(-1) === "") a.pop();
  if (b.at(-1) === "") b.pop();
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > MAX_CELLS) return undefined;
  // lcs[i][j]: length of the common subsequence of a[i..] and b[j..], stored flat.
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
  const ops: { kind: " " | "-" | "+"; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: " ", text: a[i] ?? "" });
      i++;
      j++;
    } else if (i < n && (j >= m || (lcs[(i + 1) * w + j] ?? 0) >= (lcs[i * w + j + 1] ?? 0))) {
      // Removals before additions, as diff(1) prints a replaced line.
      ops.push({ kind: "-", text: a[i] ?? "" });
      i++;
    } else {
      ops.push({ kind: "+", text: b[j] ?? "" });
      j++;
    }
  }
  const keep = ops.map(() => false);
  ops.forEach((op, k) => {
    if (op.kind === " ") return;
    for (let c = Math.max(0, k - context); c <= Math.min(ops.length - 1, k + context); c++) keep[c] = true;
  });
  const out: string[] = [];
  let skipped = false;
  ops.forEach((op, k) => {
    if (!keep[k]) {
      skipped = true;
      return;
    }
    if (skipped && out.length > 0) out.push("  ...");
    skipped = false;
    out.push(`${op.kind} ${op.text}`);
  });
  return out;
}
