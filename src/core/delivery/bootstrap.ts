export {maxBytesOf, render, type RenderOptions, type RenderResult} from './bootstrap-render.js';
export {prepare, type PrepareOptions, type PrepareResult} from './bootstrap-prepare.js';
export {claim, deliveredReceipt, type ClaimOptions, type ClaimResult} from './bootstrap-claim.js';
