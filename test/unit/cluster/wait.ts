/** Bounded waiting for the cluster tests: poll a condition until it holds or the bound passes. */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, everyMs = 10, what = "condition" } = {},
): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`${what} did not hold within ${timeoutMs} ms`);
}
