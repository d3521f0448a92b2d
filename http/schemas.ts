// Route schemas shared by the endpoint plugins. Fastify validates requests against them and
// @fastify/swagger turns them into the OpenAPI document at /api/json, so the docs and the
// checks cannot drift. Patterns are never stricter than the handlers' own parsers (which
// still word the finer errors); an empty value passes, so "missing" stays the handler's call.
// Bodies are bytes every endpoint decodes itself: they are described (rawBody) for the
// docs only, never parsed or validated by Fastify.

/** A check uuid, either case (normalizeUuid lower-cases it). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** `<seconds>` or `<seconds>.<3 digits>` (parseReadTimestamp), or empty. */
export const SEC_MS_PATTERN = '^(\\d{1,15}(\\.\\d{3})?)?$';
/** Epoch seconds (model/timestamp.ts). */
export const EPOCH_S_PATTERN = '^\\d{1,15}$';

type Schema = Record<string, unknown>;

export const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });

/** An object schema of string properties (query strings, path parameters, headers). */
export function fields(properties: Record<string, Schema>, required: string[] = []): Schema {
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

export const uuidParam = str('check uuid', { pattern: UUID_PATTERN });
export const metricNameParam = str('the metric name (URL-encoded: stream tags such as `|ST[a:b]` and any `/` are part of it)');
export const metricPath = fields({ uuid: uuidParam, '*': metricNameParam }, ['uuid', '*']);
export const secMs = (what: string): Schema => str(`${what}: \`<seconds>.<3 digits>\` (or whole \`<seconds>\`)`, { pattern: SEC_MS_PATTERN, examples: ['1700000000.000'] });
export const epochS = (what: string): Schema => str(`${what}, epoch seconds`, { pattern: EPOCH_S_PATTERN });

/** `x-svc-<name>` and its IRONdb spelling `x-snowth-<name>` (either is accepted). */
export function svcHeaders(docs: Record<string, string>): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [name, description] of Object.entries(docs)) {
    out[`x-svc-${name}`] = str(description);
    out[`x-snowth-${name}`] = str(`alias of x-svc-${name}`);
  }
  return out;
}

export const accountHeaders = svcHeaders({ 'account-id': 'account id (non-negative integer)' });

/** OpenAPI tags, one per endpoint family. */
export const TAG = {
  ingest: 'ingest',
  read: 'read',
  search: 'search',
  fetch: 'fetch',
  delete: 'delete',
  caql: 'caql',
  extensions: 'extensions',
  cluster: 'cluster',
  admin: 'admin',
  console: 'console',
} as const;

/** A request body the handler decodes itself, documented per media type. */
export interface RawBodyDoc {
  description: string;
  /** media type → what the body holds there */
  types: Record<string, string>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Documents a body the handler decodes itself (Fastify neither parses nor validates it). */
    rawBody?: RawBodyDoc;
  }
}

export const JSON_BODY = 'application/json';
export const TSV_BODY = 'text/plain';

/** The legacy JSON writers' body: an array of items, each validated on its own. */
export function jsonItems(item: string): RawBodyDoc {
  return { description: `a JSON array of ${item}; each item is checked on its own (reply as for /raw)`, types: { [JSON_BODY]: `[${item}, ...]` } };
}

/** `true|false|1|0`, or empty for the default. */
export const booleanQuery = (description: string): Schema => ({ type: 'string', description, enum: ['', 'true', 'false', '1', '0'] });
