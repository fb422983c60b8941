/** Every function library, in the order their overloads are tried when names collide. */
import { authzLibrary, authzSelectorsLibrary } from "./authz.ts";
import { encodersLibrary } from "./encoders.ts";
import { formatLibrary } from "./format.ts";
import { ipLibrary } from "./ip.ts";
import { jsonpatchLibrary } from "./jsonpatch.ts";
import { celListsLibrary, kubernetesListsLibrary } from "./lists.ts";
import { mathLibrary } from "./math.ts";
import { internalLibrary, optionalLibrary } from "./optional.ts";
import { quantityLibrary } from "./quantity.ts";
import { regexLibrary } from "./regex.ts";
import { semverLibrary } from "./semver.ts";
import { setsLibrary } from "./sets.ts";
import { stdLibrary } from "./std.ts";
import { stringsLibrary, stringsV3Library } from "./strings.ts";
import { timeLibrary } from "./time.ts";
import { urlLibrary } from "./url.ts";
import type { Library } from "./types.ts";

export const ALL_LIBRARIES: readonly Library[] = [
  internalLibrary,
  stdLibrary,
  timeLibrary,
  optionalLibrary,
  stringsLibrary,
  kubernetesListsLibrary,
  celListsLibrary,
  setsLibrary,
  regexLibrary,
  urlLibrary,
  quantityLibrary,
  ipLibrary,
  formatLibrary,
  semverLibrary,
  jsonpatchLibrary,
  authzLibrary,
  authzSelectorsLibrary,
  mathLibrary,
  encodersLibrary,
  stringsV3Library,
];
