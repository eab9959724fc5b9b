export {canonicalJson, compareUtf16, jsonEqual, sha256Hex, stableDigest, MAX_DEPTH} from './json.js';
export type {JsonObject, JsonValue} from './json.js';
export {assertJsonSafe, decodeUtf8, parseJson, withOrigin} from './parse.js';
export {prettyJson} from './pretty.js';
