/**
 * cel-go's encoders extension (ext/encoders.go): `base64.encode(bytes) -> string` and
 * `base64.decode(string) -> bytes`. Not part of the Kubernetes environment.
 *
 * Decoding follows Go's encoding/base64: the standard alphabet with padding first, and if that
 * fails, the same alphabet without padding, so `base64.decode('aGVsbG8')` works. Line breaks are
 * ignored; anything else outside the alphabet fails with Go's message, "illegal base64 data at
 * input byte N" (N counting UTF-8 bytes).
 */
import { CelError } from "../runtime/values.ts";
import { fn, globalFn, type Library } from "./types.ts";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DECODE = new Int16Array(256).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

const PAD = 0x3d;
const CR = 0x0d;
const LF = 0x0a;

class CorruptInput extends Error {
  constructor(readonly offset: number) {
    super(`illegal base64 data at input byte ${offset}`);
  }
}

function isNewline(b: number | undefined): boolean {
  return b === CR || b === LF;
}

/** Go's Encoding.Decode, quantum by quantum, for the padded or the unpadded standard encoding. */
function decode(src: Uint8Array, padded: boolean): Uint8Array {
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const quantum = [0, 0, 0, 0];
    let len = 4;
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Uint8Array.from(out);
        if (j === 1 || padded) throw new CorruptInput(si - j);
        len = j;
        break;
      }
      const b = src[si++] as number;
      const v = DECODE[b] as number;
      if (v >= 0) {
        quantum[j] = v;
        continue;
      }
      if (isNewline(b)) {
        j--;
        continue;
      }
      if (!padded || b !== PAD) throw new CorruptInput(si - 1);
      // Padding: only after two or three symbols, and "==" after two.
      if (j < 2) throw new CorruptInput(si - 1);
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) throw new CorruptInput(src.length);
        if (src[si] !== PAD) throw new CorruptInput(si - 1);
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      if (si < src.length) throw new CorruptInput(si);
      len = j;
      break;
    }
    const [a, b, c, d] = quantum as [number, number, number, number];
    const bits = (a << 18) | (b << 12) | (c << 6) | d;
    out.push((bits >> 16) & 0xff);
    if (len >= 3) out.push((bits >> 8) & 0xff);
    if (len === 4) out.push(bits & 0xff);
    if (len < 4) break;
  }
  return Uint8Array.from(out);
}

export function base64Decode(s: string): Uint8Array {
  const src = new TextEncoder().encode(s);
  try {
    return decode(src, true);
  } catch (e) {
    if (!(e instanceof CorruptInput)) throw e;
  }
  try {
    return decode(src, false);
  } catch (e) {
    if (e instanceof CorruptInput) throw new CelError(e.message);
    throw e;
  }
}

export function base64Encode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

export const encodersLibrary: Library = {
  name: "encoders",
  availability: "extra",
  functions: [
    fn("base64.encode", globalFn("base64_encode_bytes", ["bytes"], "string", base64Encode)),
    fn("base64.decode", globalFn("base64_decode_string", ["string"], "bytes", base64Decode)),
  ],
};
