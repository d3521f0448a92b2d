export * from './topology.js';
export * from './parse.js';
export * from './ring.js';
export * from './shares.js';
export * from './change.js';
