/** Every function library, in the order their overloads are tried when names collide. */
// PENDING import { encodersLibrary } from "./encoders.ts";
import { formatLibrary } from "./format.ts";
import { ipLibrary } from "./ip.ts";
import { jsonpatchLibrary } from "./jsonpatch.ts";
// PENDING import { celListsLibrary, kubernetesListsLibrary } from "./lists.ts";
// PENDING import { mathLibrary } from "./math.ts";
import { internalLibrary, optionalLibrary } from "./optional.ts";
import { quantityLibrary } from "./quantity.ts";
// PENDING import { regexLibrary } from "./regex.ts";
import { semverLibrary } from "./semver.ts";
// PENDING import { setsLibrary } from "./sets.ts";
import { stdLibrary } from "./std.ts";
import { stringsLibrary } from "./strings.ts";
import { timeLibrary } from "./time.ts";
import type { Library } from "./types.ts";
import { urlLibrary } from "./url.ts";

export const ALL_LIBRARIES: readonly Library[] = [
  internalLibrary,
  stdLibrary,
  timeLibrary,
  optionalLibrary,
  stringsLibrary,
  // PENDING kubernetesListsLibrary,
  // PENDING celListsLibrary,
  // PENDING setsLibrary,
  // PENDING regexLibrary,
  urlLibrary,
  quantityLibrary,
  ipLibrary,
  formatLibrary,
  semverLibrary,
  jsonpatchLibrary,
  // PENDING mathLibrary,
  // PENDING encodersLibrary,
];
