// Deletes (interface §2.3, §4.1; IRONdb's data-deletion docs): what a delete removes, and the
// per-metric statuses a multi-metric delete reports, in their wire spelling.
import type { DataKind } from './ingest-record.js';
import { FerriteError, type ErrorCode } from './errors.js';

/**
 * What a delete removes: raw samples of a kind (`numeric` is `/raw`), or `nnt`, the numeric
 * rollups (`/nnt`: every level, or those x-svc-delete-rollups lists).
 */
export type DeleteTarget = DataKind | 'nnt';

/** The data type a metric must hold for a delete of `target` to concern it. */
export const targetType = (target: DeleteTarget): DataKind => (target === 'nnt' ? 'numeric' : target);

/** What a shard reports for one metric. */
export type DeleteOutcome = 'deleted' | 'found' | 'no content' | 'not found';

/**
 * Every status of interface §2.3 that ferrite reports, lower-case as on the wire. (`redirected`
 * and `undefined` never occur: a multi-metric delete is never forwarded.)
 */
export type DeleteStatus = DeleteOutcome | 'not local' | 'bad request' | 'invalid range' | 'not implemented' | 'unable busy' | 'server error';

/**
 * A request argument that makes the delete impossible for every metric it selects. A
 * single-metric delete answers it as an error object; a multi-metric delete reports it per
 * metric (interface §4.1 rule 2: always an array of records) and deletes nothing.
 */
export class DeleteProblem {
  constructor(
    readonly status: 'bad request' | 'invalid range' | 'not implemented',
    readonly error: FerriteError,
  ) {}
}

/** `bad request` (malformed), `invalid range` (well-formed, out of range) or `not implemented`. */
export function deleteProblem(status: DeleteProblem['status'], code: ErrorCode, ...args: unknown[]): DeleteProblem {
  return new DeleteProblem(status, new FerriteError(code, args));
}

/**
 * The status of a metric whose delete failed: a shard restarting, an overloaded node or a
 * deadline is `unable busy` (retry later); anything else a `server error`.
 */
export function failedStatus(error: unknown): 'unable busy' | 'server error' {
  return error instanceof FerriteError && (error.status === 503 || error.status === 504) ? 'unable busy' : 'server error';
}
