// Every error a client can see, in one table (the habit of fastify's lib/errors.js).
// Each code is stable, has a message template and the HTTP status it maps to, and is
// documented in docs/errors.md; test/errors.test.ts fails when the two drift apart.

export const ERRORS = {
  FER_ERR_BAD_TIMESTAMP: { status: 400, message: 'parameter %s must be epoch seconds, optionally with exactly 3 digits of milliseconds (<seconds>[.<3 digits>]), got %s' },
  FER_ERR_BAD_EPOCH: { status: 400, message: 'parameter %s must be epoch seconds, got %s' },
  FER_ERR_MISSING_PARAM: { status: 400, message: 'missing required parameter %s' },
  FER_ERR_BAD_PARAM: { status: 400, message: 'invalid parameter %s: %s' },
  FER_ERR_MISSING_HEADER: { status: 400, message: 'missing required header %s' },
  FER_ERR_BAD_HEADER: { status: 400, message: 'invalid header %s: %s' },
  FER_ERR_BAD_UUID: { status: 400, message: 'invalid check uuid %s' },
  FER_ERR_BAD_METRIC_NAME: { status: 400, message: 'invalid metric name: %s' },
  FER_ERR_NO_VALID_RECORDS: { status: 400, message: 'no valid record in the submission (%s)' },
  FER_ERR_BAD_QUERY: { status: 400, message: 'invalid tag query: %s' },
  FER_ERR_BAD_GRAPHITE_QUERY: { status: 400, message: 'invalid graphite query: %s' },
  FER_ERR_TOO_MANY_SERIES: { status: 400, message: 'the selector matches more than %s series; narrow it' },
  FER_ERR_BAD_PROMQL: { status: 400, message: '%s' },
  FER_ERR_REJECTED_POINTS: { status: 400, message: '%s of %s data points were rejected (the others were stored); first, point %s' },
  FER_ERR_BAD_BODY: { status: 400, message: 'invalid request body: %s' },
  FER_ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'unsupported content type %s' },
  FER_ERR_BODY_TOO_LARGE: { status: 413, message: 'request body exceeds %s bytes' },
  FER_ERR_METRIC_NOT_FOUND: { status: 404, message: 'metric %s not in surrogate-db.' },
  FER_ERR_NOT_LOCAL: { status: 421, message: 'not local: %s is not stored or replicated on this node (its owners: %s); send the delete to them, or add x-svc-full-delete: 1 to journal it to them' },
  FER_ERR_NOT_IMPLEMENTED: { status: 400, message: 'not implemented: %s' },
  FER_ERR_NOT_FOUND: { status: 404, message: 'no route for %s %s' },
  FER_ERR_UNKNOWN_EXTENSION: { status: 404, message: 'no extension named %s (GET /extension/lua lists them)' },
  FER_ERR_UNKNOWN_TOPOLOGY: { status: 404, message: 'unknown topology %s (this node runs %s)' },
  FER_ERR_BAD_TOPOLOGY: { status: 400, message: 'invalid topology %s: %s' },
  FER_ERR_TOPOLOGY_HASH_MISMATCH: { status: 400, message: 'topology hash mismatch: the path names %s but the body is topology %s' },
  FER_ERR_TOPOLOGY_NOT_LOADED: { status: 404, message: 'topology %s is not loaded on this node (this node runs %s); POST /topology/%s first' },
  FER_ERR_REBALANCE_REFUSED: { status: 400, message: 'cannot rebalance to topology %s: %s' },
  FER_ERR_REBALANCE_BUSY: { status: 409, message: 'a rebalance to topology %s is already under way (state %s); POST /rebalance/deactivate/%s to abort it' },
  FER_ERR_REBALANCE_SWITCHED: { status: 409, message: 'the rebalance to topology %s can no longer be aborted: every node relocated and this one runs under the new topology (state %s)' },
  FER_ERR_NO_REBALANCE: { status: 409, message: 'no rebalance to topology %s is under way (%s)' },
  FER_ERR_EXTENSION_TIMEOUT: { status: 504, message: '%s' },
  FER_ERR_EXTENSION_FAILED: { status: 500, message: '%s' },
  FER_ERR_TIMEOUT: { status: 504, message: '%s did not finish before its deadline (x-svc-timeout / x-svc-deadline; default 60 s); narrow the request or allow more time' },
  FER_ERR_OVERLOADED: { status: 503, message: 'service unavailable: %s' },
  FER_ERR_NOT_REPLICATED: { status: 503, message: 'stored on this node but not yet acknowledged by the cluster journal (%s); it will be delivered, numeric and text retries are safe' },
  FER_ERR_NO_OWNER: { status: 503, message: 'no owner of %s answered: %s' },
  FER_ERR_REBUILDING: { status: 503, message: 'service unavailable: node %s is rebuilding from its peers and does not yet serve this; see /state rebuild' },
  FER_ERR_CHECKPOINT_FAILING: { status: 503, message: 'service unavailable: checkpoints are failing (%s); writes are refused until one succeeds, see /state' },
  FER_ERR_SHUTTING_DOWN: { status: 503, message: 'service unavailable: node is shutting down' },
  FER_ERR_SHARD_UNAVAILABLE: { status: 503, message: 'service unavailable: shard %s is restarting after a failure; %s' },
  FER_ERR_STORAGE: { status: 500, message: 'storage failure: %s' },
  FER_ERR_BUG: { status: 500, message: 'BUG: %s' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export class FerriteError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, args: readonly unknown[] = [], options?: { cause?: unknown }) {
    super(format(ERRORS[code].message, args), options);
    this.name = 'FerriteError';
    this.code = code;
    this.status = ERRORS[code].status;
  }

  /** The error with its message already written (one that crossed from another thread). */
  static withMessage(code: ErrorCode, message: string): FerriteError {
    const error = new FerriteError(code);
    error.message = message;
    return error;
  }
}

export function ferr(code: ErrorCode, ...args: unknown[]): FerriteError {
  return new FerriteError(code, args);
}

function format(template: string, args: readonly unknown[]): string {
  let i = 0;
  return template.replace(/%s/g, () => String(i < args.length ? args[i++] : ''));
}
