/**
 * Campaign-level false-promotion control, one module per job: the policy,
 * the reservations, the statistics over fixture blocks, the authorization.
 */
export * from './campaign-policy.js';
export * from './campaign-reservations.js';
export * from './campaign-blocks.js';
export * from './campaign-authorization.js';
