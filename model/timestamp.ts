import { asEpochMs, type EpochMs, type EpochSec } from './types.js';

// Interface §2.2: `<seconds>.<milliseconds>` with exactly three digits after the point,
// always present (pattern %lu.%03lu). Anything else is illegal.
const SEC_MS = /^(\d{1,15})\.(\d{3})$/;

/** Parses the strict `<seconds>.<3 digits>` form; null when it does not match. */
export function parseSecMs(text: string): EpochMs | null {
  const m = SEC_MS.exec(text);
  if (m === null) return null;
  return asEpochMs(Number(m[1]) * 1000 + Number(m[2]));
}

// Reads (`start_ts`, `end_ts`) also take whole seconds: IRONdb's current spec says "if defined,
// milliseconds must always be 3 digits", and its clients (gosnowth's rollup reads, the
// Prometheus adapter) send `1700000000`. A fraction of another length stays illegal.
const READ_TS = /^(\d{1,15})(?:\.(\d{3}))?$/;

/** Parses `<seconds>` or `<seconds>.<3 digits>`; null when it matches neither. */
export function parseReadTimestamp(text: string): EpochMs | null {
  const m = READ_TS.exec(text);
  if (m === null) return null;
  return asEpochMs(Number(m[1]) * 1000 + Number(m[2] ?? 0));
}

/** Formats epoch ms the way the interface writes `<seconds>.<3 digits>`. */
export function formatSecMs(ms: EpochMs): string {
  const sec = Math.floor(ms / 1000);
  return `${sec}.${String(ms - sec * 1000).padStart(3, '0')}`;
}

const EPOCH_SECONDS = /^\d{1,15}$/;

/** Parses a non-negative integer count of epoch seconds; null when malformed. */
export function parseEpochSec(text: string): EpochSec | null {
  return EPOCH_SECONDS.test(text) ? (Number(text) as EpochSec) : null;
}
