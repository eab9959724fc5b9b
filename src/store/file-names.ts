import {MEDIA_TYPE_EXTENSIONS} from '../model/bundle/kinds.js';
import {rethrowUnless} from '../errors.js';

/**
 * Component keys as file names: [A-Za-z0-9_-] and inner dots stay; every other
 * UTF-8 byte (and a leading dot, and "%") becomes %XX. Decoding reverses it, so
 * a materialized folder proposes back to the same digest.
 */
export function encodeKey(key: string): string {
  let out = '';
  const bytes = Buffer.from(key, 'utf8');
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    const ch = String.fromCharCode(b);
    const plain =
      (b >= 0x30 && b <= 0x39) ||
      (b >= 0x41 && b <= 0x5a) ||
      (b >= 0x61 && b <= 0x7a) ||
      ch === '_' ||
      ch === '-' ||
      (ch === '.' && i > 0);
    out += plain ? ch : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeKey(name: string): string {
  if (!/%[0-9A-Fa-f]{2}/.test(name)) return name;
  try {
    return decodeURIComponent(name.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
  } catch (error) {
    rethrowUnless(error, (e) => (e as Error | null)?.name === 'URIError');
    return name;
  }
}

/** File extension for a media type; unknown types are written as .txt. */
export function extensionForMediaType(mediaType: string): string {
  return MEDIA_TYPE_EXTENSIONS[mediaType] ?? '.txt';
}

export function componentFileName(key: string, mediaType: string): string {
  return `${encodeKey(key)}${extensionForMediaType(mediaType)}`;
}
