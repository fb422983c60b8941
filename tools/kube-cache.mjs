/**
 * Where the built control-plane binaries live: outside the repository, so every clone on a machine
 * (CI clones the repository anew for each run) shares one build. CELGATE_KUBE_CACHE names the
 * directory; else $XDG_CACHE_HOME/celgate/kube, else ~/.cache/celgate/kube. Each release has a
 * directory of its own, named by its exact version.
 */
import { homedir } from "node:os";
import { join } from "node:path";

/** @returns {string} */
export function kubeCacheDir() {
  const named = process.env.CELGATE_KUBE_CACHE;
  if (named) return named;
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg ? xdg : join(homedir(), ".cache"), "celgate", "kube");
}
