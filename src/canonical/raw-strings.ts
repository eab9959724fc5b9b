import {isUtf8} from 'node:buffer';

/**
 * The string literals of a JSON document that are the values of one key, as
 * they are spelled in its bytes, for hashing them without decoding and
 * escaping them again (verify's fast path over manifests, issue 20).
 *
 * A literal is taken only when its bytes are exactly JSON.stringify's
 * spelling of its value: printable ASCII, and only the escapes JSON.stringify
 * writes (\" \\ \b \f \n \r \t, and \u00xx in lowercase for the other control
 * characters). Then canonical JSON of the value is those bytes. Anything else
 * (a literal with text beyond ASCII, which the Python spelling escapes as
 * \uXXXX; invalid UTF-8; a document that does not scan) gives null, and the
 * caller takes the general path, which decides and names every problem.
 */
export interface RawLiterals {
  /** [start, end) of each literal, quotes included, in document order. */
  literals: Array<[number, number]>;
  /** The document with each of those literals replaced by "". */
  skeleton: string;
}

/**
 * A literal's body in JSON.stringify's spelling, up to and including its
 * closing quote: printable ASCII but " and \, the short escapes, and \u00xx
 * (lowercase) for the control characters that have no short form.
 */
const PLAIN_BODY = /(?:[\x20\x21\x23-\x5b\x5d-\x7e]+|\\["\\bfnrt]|\\u00(?:0[0-7bef]|1[0-9a-f]))*"/y;
const SPACE = new Set([' ', '\n', '\r', '\t']);

/** The index of the closing quote of the literal opened at `open` (any literal), or -1. */
function closeOf(text: string, open: number): number {
  for (let at = open + 1; ; ) {
    const q = text.indexOf('"', at);
    if (q === -1) return -1;
    let slashes = 0;
    for (let i = q - 1; text.charCodeAt(i) === 0x5c; i--) slashes++;
    if (slashes % 2 === 0) return q;
    at = q + 1;
  }
}

/** The literals that are values of `key` (see RawLiterals), or null. */
export function rawLiteralsOf(bytes: Uint8Array, key: string): RawLiterals | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isUtf8(buf)) return null;
  const text = buf.toString('latin1'); // one character per byte: quotes and backslashes never occur inside a UTF-8 sequence
  const name = JSON.stringify(key);
  const literals: Array<[number, number]> = [];
  let at = 0;
  let valueOfKey = false;
  for (;;) {
    const open = text.indexOf('"', at);
    if (open === -1) break;
    let end: number;
    if (valueOfKey) {
      PLAIN_BODY.lastIndex = open + 1;
      if (!PLAIN_BODY.test(text)) return null; // not JSON.stringify's spelling (or not JSON): the general path decides
      end = PLAIN_BODY.lastIndex;
      literals.push([open, end]);
      valueOfKey = false;
    } else if ((end = closeOf(text, open) + 1) === 0) {
      return null;
    } else if (end - open === name.length && text.slice(open, end) === name) {
      let i = end;
      while (SPACE.has(text[i]!)) i++;
      if (text[i] === ':') {
        i++;
        while (SPACE.has(text[i]!)) i++;
        if (text[i] !== '"') return null; // the key's value is not a string: the general path says so
        valueOfKey = true;
        at = i;
        continue;
      }
    }
    at = end;
  }
  if (valueOfKey) return null;
  let skeleton = '';
  let from = 0;
  for (const [start, end] of literals) {
    skeleton += `${buf.toString('utf8', from, start)}""`;
    from = end;
  }
  skeleton += buf.toString('utf8', from);
  return {literals, skeleton};
}
