import {isAscii, isUtf8} from 'node:buffer';
import literalScan from './literal-scan.generated.js';

/**
 * The string literals of a JSON document that are the values of one key, as
 * they are spelled in its bytes, for hashing them without decoding and
 * escaping them again (verify's fast path over manifests).
 *
 * A document is taken only when every literal's bytes are exactly
 * JSON.stringify's spelling of its value: valid UTF-8 with no control
 * character, and only the escapes JSON.stringify writes (\" \\ \b \f \n \r \t, and \u00xx in
 * lowercase for the other control characters). Then canonical JSON of the
 * value is those bytes. Anything else (a \u escape of another character, as
 * the Python spelling writes text beyond ASCII; \/; invalid UTF-8; a control
 * character anywhere but a newline between tokens; a document that does not
 * scan) gives null, and the caller takes the general path, which decides and
 * names every problem.
 *
 * The bytes are scanned by a small WebAssembly module, sixteen at a time
 * (literal-scan.wat): the literals of a manifest are most of its bytes, and
 * scanning them in JavaScript cost as much as hashing them.
 */
export interface RawLiterals {
  /** [start, end) of each literal, quotes included, in document order. */
  literals: Array<[number, number]>;
  /** The document with each of those literals replaced by "". */
  skeleton: string;
}

const SPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);
const QUOTE = 0x22;
const COLON = 0x3a;

/**
 * The scanner (literal-scan.wat): every literal's bounds, sixteen bytes at a
 * time, each checked to be in JSON.stringify's spelling. One instance, its
 * memory grown to the largest document seen: the document, 16 bytes of slack,
 * then room for the bounds.
 */
let scanner: {memory: WebAssembly.Memory; scan: (n: number, out: number, max: number) => number} | undefined;

function scanLiterals(buf: Buffer): Uint32Array | null {
  scanner ??= (() => {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(literalScan)));
    return {
      memory: instance.exports.memory as WebAssembly.Memory,
      scan: instance.exports.scan as (n: number, out: number, max: number) => number,
    };
  })();
  const n = buf.length;
  const out = (n + 16 + 7) & ~7;
  const max = (n >> 2) + 16; // a literal takes two bytes and a separator: more than this falls back
  const need = out + 8 * max;
  const {memory} = scanner;
  if (memory.buffer.byteLength < need) memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
  new Uint8Array(memory.buffer, 0, n).set(buf);
  const count = scanner.scan(n, out, max);
  return count < 0 ? null : new Uint32Array(memory.buffer, out, 2 * count);
}

/** The literals that are values of `key` (see RawLiterals), or null. */
/** Whether buf holds `name` at `at` (a short key name: a loop, not a native call). */
function sameAt(buf: Buffer, at: number, name: Buffer): boolean {
  for (let i = 0; i < name.length; i++) if (buf[at + i] !== name[i]) return false;
  return true;
}

export function rawLiteralsOf(bytes: Uint8Array, key: string): RawLiterals | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = isAscii(buf);
  if (!ascii && !isUtf8(buf)) return null;
  const bounds = scanLiterals(buf);
  if (bounds === null) return null; // not JSON.stringify's spelling, or not JSON: the general path decides
  const name = Buffer.from(JSON.stringify(key));
  const literals: Array<[number, number]> = [];
  const count = bounds.length >> 1;
  for (let k = 0; k < count; k++) {
    const open = bounds[2 * k]!;
    const end = bounds[2 * k + 1]!;
    if (end - open !== name.length || !sameAt(buf, open, name)) continue;
    let i = end;
    while (SPACE.has(buf[i]!)) i++;
    if (buf[i] !== COLON) continue; // the key's name as a value, not as a key
    i++;
    while (SPACE.has(buf[i]!)) i++;
    // the key's value is not a string: the general path says so
    if (buf[i] !== QUOTE || k + 1 === count || bounds[2 * k + 2] !== i) return null;
    literals.push([i, bounds[2 * k + 3]!]);
    k++; // the value is not a key
  }
  // The pieces between the literals, decoded (ASCII needs none: its latin1 text is the text).
  const encoding = ascii ? 'latin1' : 'utf8';
  let skeleton = '';
  let from = 0;
  for (const [start, end] of literals) {
    skeleton += `${buf.toString(encoding, from, start)}""`;
    from = end;
  }
  skeleton += buf.toString(encoding, from);
  return {literals, skeleton};
}
