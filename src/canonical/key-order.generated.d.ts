// Types of the module scripts/build-wasm.js generates into dist/ at build time:
// the bytes of src/canonical/key-order.wat, assembled.
declare const bytes: Buffer;
export default bytes;
