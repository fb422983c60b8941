/** The directory of the built control-plane binaries (tools/kube-cache.mjs). */
export function kubeCacheDir(): string;
