// Request deadlines (irondb-reference §4.2, §4.3): `X-Snowth-Timeout: <amount><unit>`
// (`10000ms`, `60s`; without a unit it is ignored, as IRONdb does) and
// `X-Snowth-Deadline: <epoch seconds>`, which supersedes the timeout.
import { ferr } from './errors.js';
import type { EpochMs } from './types.js';
import { lookupTable } from './lookup-table.js';

const UNIT_MS: Record<string, number> = lookupTable({ ms: 1, s: 1000, sec: 1000, m: 60_000, min: 60_000, h: 3_600_000 });

/** Milliseconds of a timeout header, or null when it has no amount and unit. */
export function parseTimeoutMs(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|min|m|h)\s*$/.exec(text);
  return m === null ? null : Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** The deadline of a request: the deadline header, else now plus the timeout header, else now plus `defaultMs`. */
export function deadlineOf(timeoutHeader: string | undefined, deadlineHeader: string | undefined, defaultMs: number, now = Date.now()): EpochMs {
  if (deadlineHeader !== undefined && deadlineHeader.trim() !== '') {
    const s = Number(deadlineHeader.trim());
    if (!Number.isFinite(s) || s < 0) throw ferr('FER_ERR_BAD_HEADER', 'x-svc-deadline', `'${deadlineHeader}' is not epoch seconds`);
    return (s * 1000) as EpochMs;
  }
  const timeout = timeoutHeader === undefined ? null : parseTimeoutMs(timeoutHeader);
  return (now + (timeout ?? defaultMs)) as EpochMs;
}

/**
 * Settles as `work` does, or rejects once `deadline` passes: with a 504 naming `what`, or
 * with `late()` where a missed deadline means something else (a peer that did not answer).
 */
export function withinDeadline<T>(work: Promise<T>, deadline: number, what: string, late: () => Error = () => ferr('FER_ERR_TIMEOUT', what)): Promise<T> {
  // Once the deadline answered, the abandoned work's own failure has no one to tell.
  work.catch(() => undefined);
  const left = deadline - Date.now();
  if (left <= 0) return Promise.reject(late());
  let timer: NodeJS.Timeout;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(late()), left)));
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Throws the 504 when `deadline` has passed: long loops check it between steps. */
export function checkDeadline(deadline: number, what: string): void {
  if (Date.now() > deadline) throw ferr('FER_ERR_TIMEOUT', what);
}
