// The circllhist library: bins, histograms, serialization (../shared/spec/circllhist.md).
export * from './bin.js';
export * from './histogram.js';
export * from './serialize.js';
export * from './cumulative.js';
