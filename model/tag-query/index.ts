// Tag queries: parse, match, and plan against the index (irondb-reference §1.4–1.5).
export * from './ast.js';
export * from './parse.js';
export * from './match.js';
export * from './plan.js';
export * from './pattern.js';
export * from './format.js';
