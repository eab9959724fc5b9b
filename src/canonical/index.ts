export {
  canonicalJson,
  compareUtf16,
  jsonEqual,
  LARGE_STRING,
  sha256Hex,
  stableDigest,
  textPieces,
  utf8Piece,
  MAX_DEPTH,
} from './json.js';
export type {JsonObject, JsonValue} from './json.js';
export {assertJsonSafe, decodeUtf8, parseJson, withOrigin} from './parse.js';
export {LARGE_DOCUMENT, parseJsonUtf8} from './parse-bytes.js';
export {prettyJson, prettyJsonPieces} from './pretty.js';
export {rawLiteralsOf, type RawLiterals} from './raw-strings.js';
