// The CAQL function table: every name a query may call.
import { ARITH } from './arith.js';
import { HISTOGRAMS } from './histogram.js';
import { SELECT } from './select.js';
import { STREAMS } from './streams.js';
import type { CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

export const FUNCTIONS: Readonly<Record<string, CaqlFunction>> = lookupTable({ ...SELECT, ...ARITH, ...STREAMS, ...HISTOGRAMS });
