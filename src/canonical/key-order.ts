import {hash} from 'node:crypto';
import keyOrder from './key-order.generated.js';

/**
 * Canonical JSON of a value whose objects are not all in key order, from
 * JSON.stringify's text of the value itself: the text is written
 * once as UTF-8 into the memory of a small WebAssembly module
 * (key-order.wat), which puts every object's members in key order in place,
 * sixteen bytes at a time. No copy of the value is built and no second string
 * is put together; the bytes are hashed where they lie.
 *
 * The caller has checked the value (canonical JSON accepts it, and it holds
 * no string long enough to be hashed in pieces), so JSON.stringify writes
 * every value as canonical JSON does and only the order of members can differ.
 * Returns null where the module cannot decide the order (a key with an
 * escape): the caller sorts another way.
 */
interface Sorter {
  memory: WebAssembly.Memory;
  /** All of memory as a Buffer, made again when memory grows (which replaces its ArrayBuffer). */
  view: Buffer;
  reorder: (
    n: number,
    members: number,
    membersEnd: number,
    frames: number,
    framesEnd: number,
    scratch: number,
  ) => number;
}

let module: WebAssembly.Module | undefined;
let sorter: Sorter | undefined;

/** Memory kept between calls; a larger text's memory is let go once it is done. */
const KEEP_BYTES = 64 << 20;
/** Open objects and arrays: the caller refuses values nested deeper than 256. */
const MAX_FRAMES = 260;

function instance(): Sorter {
  module ??= new WebAssembly.Module(new Uint8Array(keyOrder));
  const made = new WebAssembly.Instance(module);
  const memory = made.exports.memory as WebAssembly.Memory;
  return {memory, view: Buffer.from(memory.buffer), reorder: made.exports.reorder as Sorter['reorder']};
}

/** Texts shorter than this are laid out for three bytes per character, which saves measuring them first. */
const SHORT = 1 << 16;
/** Member records laid out at first; an object with more members than this open at once takes a second run. */
const FEW_RECORDS = 1 << 12;

/**
 * Where each part of the sorter's memory goes, for a text of at most `room`
 * bytes and `records` member records: the text and 16 bytes the scan may read
 * past it; the records; the frames and the record being placed; scratch as
 * large as the text.
 */
function layout(room: number, records: number) {
  const members = (room + 16 + 7) & ~7;
  const membersEnd = members + 12 * records;
  const frames = membersEnd;
  const framesEnd = frames + 12 * MAX_FRAMES;
  const scratch = framesEnd + 16;
  return {members, membersEnd, frames, framesEnd, scratch, need: scratch + room};
}

/** Grows the sorter's memory to at least `need` bytes; what it holds stays. */
function reserve(s: Sorter, need: number): void {
  if (s.view.length >= need) return;
  s.memory.grow(Math.ceil((need - s.view.length) / 65536));
  s.view = Buffer.from(s.memory.buffer);
}

/**
 * Runs the sorter over the text; `use` gets memory and the text's length in bytes, in order (valid only during the
 * call).
 */
function sortedBytes<T>(text: string, use: (view: Buffer, n: number) => T): T | null {
  const s = (sorter ??= instance());
  const room = text.length < SHORT ? 3 * text.length : Buffer.byteLength(text, 'utf8');
  // A member takes at least five bytes with its comma: no more can be open at once.
  const most = Math.floor(room / 5) + 2;
  let records = Math.min(most, FEW_RECORDS);
  reserve(s, layout(room, records).need);
  const n = s.view.write(text, 0, 'utf8');
  try {
    for (;;) {
      const at = layout(room, records);
      reserve(s, at.need);
      const result = s.reorder(n, at.members, at.membersEnd, at.frames, at.framesEnd, at.scratch);
      // Out of records: run again with room for all. The objects sorted so far are in order now, so they stay as they
      // are.
      if (result === -2 && records < most) {
        records = most;
        continue;
      }
      return result === 0 ? use(s.view, n) : null;
    }
  } finally {
    if (s.view.length > KEEP_BYTES) sorter = undefined;
  }
}

/** The canonical JSON of the value JSON.stringify wrote as `text`, or null (see above). */
export function sortKeys(text: string): string | null {
  return sortedBytes(text, (view, n) => view.toString('utf8', 0, n));
}

/** SHA-256, as hex, of the canonical JSON of the value JSON.stringify wrote as `text`, or null (see above). */
export function sortKeysDigest(text: string): string | null {
  return sortedBytes(text, (view, n) => hash('sha256', view.subarray(0, n), 'hex'));
}
