export * from './kinds.js';
export * from './component.js';
export * from './bundle.js';
export * from './diff.js';
export * from './lifecycle.js';
export * from './policy.js';
export * from './trial.js';
export * from './serveability.js';
