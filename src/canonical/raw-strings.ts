import {isAscii, isUtf8} from 'node:buffer';

/**
 * The string literals of a JSON document that are the values of one key, as
 * they are spelled in its bytes, for hashing them without decoding and
 * escaping them again (verify's fast path over manifests, issue 20).
 *
 * A literal is taken only when its bytes are exactly JSON.stringify's
 * spelling of its value: valid UTF-8 with no control character, and only the
 * escapes JSON.stringify writes (\" \\ \b \f \n \r \t, and \u00xx in
 * lowercase for the other control characters). Then canonical JSON of the
 * value is those bytes. Anything else (a \u escape of another character, as
 * the Python spelling writes text beyond ASCII; \/; invalid UTF-8; a control
 * character anywhere but a newline between tokens; a document that does not
 * scan) gives null, and the caller takes the general path, which decides and
 * names every problem.
 *
 * Every scan is a native indexOf: the literals of a manifest are most of its
 * bytes, and a regular expression over them cost more than hashing them.
 */
export interface RawLiterals {
  /** [start, end) of each literal, quotes included, in document order. */
  literals: Array<[number, number]>;
  /** The document with each of those literals replaced by "". */
  skeleton: string;
}

const SPACE = new Set([' ', '\n', '\r', '\t']);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** The characters after a backslash that JSON.stringify writes as a short escape. */
const SHORT_ESCAPES = new Set([QUOTE, BACKSLASH, 0x62, 0x66, 0x6e, 0x72, 0x74]);
/** The control characters JSON.stringify writes as \u00xx (the others have a short escape). */
const U_ESCAPES = new Set(['00', '01', '02', '03', '04', '05', '06', '07', '0b', '0e', '0f', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '1a', '1b', '1c', '1d', '1e', '1f']);

/**
 * True when the bytes hold a control character (below 0x20) other than a
 * newline: four bytes at a time, a word with any byte below 0x20 looked at
 * byte by byte (only newlines pass).
 */
function hasControl(buf: Buffer): boolean {
  const bad = (b: number) => b < 0x20 && b !== 0x0a;
  const head = Math.min(buf.length, (4 - (buf.byteOffset & 3)) & 3);
  for (let i = 0; i < head; i++) if (bad(buf[i]!)) return true;
  const words = (buf.length - head) >> 2;
  const w = new Uint32Array(buf.buffer, buf.byteOffset + head, words);
  for (let i = 0; i < words; i++) {
    const x = w[i]!;
    if (((x - 0x20202020) & ~x & 0x80808080) !== 0) {
      const at = head + 4 * i;
      if (bad(buf[at]!) || bad(buf[at + 1]!) || bad(buf[at + 2]!) || bad(buf[at + 3]!)) return true;
    }
  }
  for (let i = head + 4 * words; i < buf.length; i++) if (bad(buf[i]!)) return true;
  return false;
}

/**
 * Scans one document: the next quote, backslash and newline are each found
 * once and kept, so a literal costs a few native searches however many
 * escapes it holds. Positions only move forward.
 */
const NONE = Number.MAX_SAFE_INTEGER;
class Scanner {
  private quote = -1;
  private backslash = -1;
  private newline = -1;

  constructor(readonly text: string) {}

  /** The end (after the closing quote) of the literal opened at `open`, or -1; `plain`: only JSON.stringify's escapes. */
  end(open: number, plain: boolean): number {
    const text = this.text;
    let at = open + 1;
    let q = this.quote;
    let b = this.backslash;
    for (;;) {
      if (q < at) {
        q = text.indexOf('"', at);
        if (q === -1) return -1;
      }
      if (b < at) {
        b = text.indexOf('\\', at);
        if (b === -1) b = NONE;
      }
      if (b > q) break;
      const after = text.charCodeAt(b + 1);
      if (SHORT_ESCAPES.has(after) || !plain) at = b + 2;
      else if (after === 0x75 && text.startsWith('00', b + 2) && U_ESCAPES.has(text.slice(b + 4, b + 6))) at = b + 6;
      else return -1;
    }
    this.quote = q;
    this.backslash = b;
    if (plain) {
      if (this.newline < open) {
        this.newline = text.indexOf('\n', open);
        if (this.newline === -1) this.newline = NONE;
      }
      if (this.newline < q) return -1; // a raw newline inside a literal is not JSON
    }
    return q + 1;
  }
}

/** The literals that are values of `key` (see RawLiterals), or null. */
export function rawLiteralsOf(bytes: Uint8Array, key: string): RawLiterals | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = isAscii(buf);
  if ((!ascii && !isUtf8(buf)) || hasControl(buf)) return null;
  const text = buf.toString('latin1'); // one character per byte: quotes and backslashes never occur inside a UTF-8 sequence
  const scan = new Scanner(text);
  const name = JSON.stringify(key);
  const literals: Array<[number, number]> = [];
  let at = 0;
  let valueOfKey = false;
  for (;;) {
    const open = text.indexOf('"', at);
    if (open === -1) break;
    const end = scan.end(open, valueOfKey);
    if (end === -1) return null; // not JSON.stringify's spelling, or not JSON: the general path decides
    if (valueOfKey) {
      literals.push([open, end]);
      valueOfKey = false;
    } else if (end - open === name.length && text.startsWith(name, open)) {
      let i = end;
      while (SPACE.has(text[i]!)) i++;
      if (text[i] === ':') {
        i++;
        while (SPACE.has(text[i]!)) i++;
        if (text.charCodeAt(i) !== QUOTE) return null; // the key's value is not a string: the general path says so
        valueOfKey = true;
        at = i;
        continue;
      }
    }
    at = end;
  }
  if (valueOfKey) return null;
  // The pieces between the literals, decoded (ASCII needs none: its latin1 text is the text).
  const piece = ascii ? (from: number, to?: number) => text.slice(from, to) : (from: number, to?: number) => buf.toString('utf8', from, to);
  let skeleton = '';
  let from = 0;
  for (const [start, end] of literals) {
    skeleton += `${piece(from, start)}""`;
    from = end;
  }
  skeleton += piece(from);
  return {literals, skeleton};
}
