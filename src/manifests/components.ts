/**
 * Pairs served on one split path, split into webhooks that no request reaches together. Each such
 * webhook carries what its own pairs share (carry.ts), which is more than what every pair on the
 * path shares: a policy for CertificateSigningRequests keeps its signer matchCondition even though
 * the Pod policies on the same path have none, so the kubelets' own CSRs never reach celgate.
 *
 * The split is safe only if no request is sent to two webhooks of one path, or the path would
 * evaluate its pairs twice for it. Rules that share an operation, a resource name and a scope may
 * meet; their groups and versions are not looked at, since with matchPolicy Equivalent the API
 * server also sends a webhook the same resource requested through another group or version.
 */
import { intersectRules, type WebhookRule } from "./rules.ts";

/** The rule as it is compared for meeting: any group, any version. */
function loosened(rule: WebhookRule): WebhookRule {
  return { ...rule, apiGroups: ["*"], apiVersions: ["*"] };
}

function meet(a: readonly WebhookRule[], b: readonly WebhookRule[]): boolean {
  return a.some((x) => b.some((y) => intersectRules(loosened(x), loosened(y)) !== undefined));
}

/**
 * The connected components of `items` under "their rules may meet", each in the order its items
 * first appear, the components ordered by their first item.
 */
export function components<T>(items: readonly T[], rulesOf: (item: T) => readonly WebhookRule[]): T[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    return r;
  };
  for (let i = 0; i < items.length; i++)
    for (let j = 0; j < i; j++)
      if (find(i) !== find(j) && meet(rulesOf(items[i] as T), rulesOf(items[j] as T))) {
        const [a, b] = [find(i), find(j)];
        parent[Math.max(a, b)] = Math.min(a, b);
      }
  const byRoot = new Map<number, T[]>();
  items.forEach((item, i) => {
    const root = find(i);
    byRoot.set(root, [...(byRoot.get(root) ?? []), item]);
  });
  return [...byRoot.values()];
}
