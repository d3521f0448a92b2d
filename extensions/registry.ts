// Lua extensions (issue 10): `.lua` files in the extensions directory, each returning
// `{name, description, params = {{name, type}, …}, handler = function(params, ferrite)}`.
// Declarations are read once at start (each in its own sandbox); every call runs the file
// again in a fresh sandbox and returns what the handler returns.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { runInWorker, type CallOutcome } from './runner.js';
import { TIMEOUT_MESSAGE, type SandboxLimits } from './sandbox.js';

export const PARAM_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
export type ParamType = (typeof PARAM_TYPES)[number];

export interface ExtensionParam {
  name: string;
  type: ParamType;
}

export interface Extension {
  name: string;
  description: string;
  params: Record<string, ExtensionParam>;
  file: string;
  source: string;
}

/** What a handler's `ferrite` argument offers (each answers a promise the driver awaits). */
export interface ExtensionApi {
  find(query: string): Promise<unknown[]>;
  fetch(doc: unknown): Promise<unknown>;
  read(uuid: string, metric: string, startS: number, endS: number): Promise<unknown[]>;
}

export class ExtensionError extends Error {
  constructor(
    readonly kind: 'param' | 'failed' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'ExtensionError';
  }
}

const NAME = /^[A-Za-z0-9_]+$/;
/** Deepest table an extension may return. */
export const MAX_RESULT_DEPTH = 512;

const LOAD_USER_CODE = `
local chunk, err = load(__source, "=" .. __file)
if not chunk then error(err, 0) end
local ext = chunk()
if type(ext) ~= "table" then error("the file must return a table {name, description, params, handler}", 0) end
if type(ext.handler) ~= "function" then error("handler must be a function(params, ferrite)", 0) end
`;

const DECLARE = `${LOAD_USER_CODE}
return { name = ext.name, description = ext.description, params = ext.params }
`;

const CALL = `${LOAD_USER_CODE}
local api = __api
local ferrite = {
  find = function(query) return api.find(query):await() end,
  fetch = function(doc) return api.fetch(doc):await() end,
  read = function(uuid, metric, s, e) return api.read(uuid, metric, s, e):await() end,
}
local result = ext.handler(__params, ferrite)
-- Converting a result to JSON recurses: refuse absurd nesting here, iteratively, before it does.
local stack, depths, seen = { result }, { 0 }, {}
while #stack > 0 do
  local v, d = table.remove(stack), table.remove(depths)
  if type(v) == "table" and not seen[v] then
    if d >= ${MAX_RESULT_DEPTH} then error("the result is nested deeper than ${MAX_RESULT_DEPTH} levels", 0) end
    seen[v] = true
    for _, child in pairs(v) do stack[#stack + 1] = child; depths[#depths + 1] = d + 1 end
  end
end
return result
`;

/** Loads every `.lua` file of `dir`; a file that does not declare a valid extension is logged and skipped. */
export async function loadExtensions(dir: string | null, limits: SandboxLimits, reserved: string[], log: Logger): Promise<Map<string, Extension>> {
  const out = new Map<string, Extension>();
  if (dir === null) return out;
  for (const entry of readdirSync(dir).filter((f) => f.endsWith('.lua')).sort()) {
    const file = path.join(dir, entry);
    try {
      const ext = await declare(file, limits);
      if (reserved.includes(ext.name) || out.has(ext.name)) throw new Error(`the name ${ext.name} is already taken`);
      out.set(ext.name, ext);
    } catch (error) {
      log.error({ file }, `Lua extension not loaded: ${String((error as Error).message).split("\nstack traceback:")[0]}`);
    }
  }
  return out;
}

async function declare(file: string, limits: SandboxLimits): Promise<Extension> {
  const source = readFileSync(file, 'utf8');
  const d = JSON.parse(outcomeJson(await runInWorker(limits, { __source: source, __file: path.basename(file) }, DECLARE), path.basename(file), limits)) as {
    name?: unknown;
    description?: unknown;
    params?: unknown;
  };
  if (typeof d.name !== 'string' || !NAME.test(d.name)) throw new Error('name must be letters, digits and _');
  const params: Record<string, ExtensionParam> = {};
  const list = d.params === undefined || d.params === null ? [] : Object.values(d.params as Record<string, unknown>);
  for (const p of list as { name?: unknown; type?: unknown }[]) {
    if (typeof p?.name !== 'string' || !NAME.test(p.name)) throw new Error('each param needs a name of letters, digits and _');
    if (!(PARAM_TYPES as readonly unknown[]).includes(p.type)) throw new Error(`param ${p.name}: type must be one of ${PARAM_TYPES.join(', ')}`);
    params[p.name] = { name: p.name, type: p.type as ParamType };
  }
  return { name: d.name, description: typeof d.description === 'string' ? d.description : '', params, file, source };
}

/** Checks and converts request params (query-string values arrive as strings); unknown ones are refused. */
export function validateParams(ext: Extension, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const p = ext.params[key];
    if (p === undefined) throw new ExtensionError('param', `${ext.name} has no parameter ${key} (it takes ${Object.keys(ext.params).join(', ') || 'none'})`);
    out[key] = convert(ext.name, p, value);
  }
  return out;
}

function convert(ext: string, p: ExtensionParam, value: unknown): unknown {
  const bad = () => new ExtensionError('param', `${ext}: parameter ${p.name} must be ${p.type === 'integer' ? 'an integer' : `a ${p.type}`}, got ${JSON.stringify(value)}`);
  switch (p.type) {
    case 'string':
      if (typeof value !== 'string') throw bad();
      return value;
    case 'number':
    case 'integer': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (!Number.isFinite(n) || (p.type === 'integer' && !Number.isInteger(n))) throw bad();
      return n;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      throw bad();
  }
}

/**
 * Runs the handler in a fresh sandbox in its own worker; answers the JSON text of what it
 * returned. Lua errors and timeouts become ExtensionErrors.
 */
export async function runExtension(ext: Extension, params: Record<string, unknown>, api: ExtensionApi, limits: SandboxLimits): Promise<string> {
  const handlers = { find: api.find.bind(api), fetch: api.fetch.bind(api), read: api.read.bind(api) };
  const outcome = await runInWorker(limits, { __source: ext.source, __file: path.basename(ext.file), __params: params }, CALL, handlers);
  return outcomeJson(outcome, ext.name, limits);
}

function outcomeJson(outcome: CallOutcome, name: string, limits: SandboxLimits): string {
  if (outcome.ok) return outcome.json;
  const timedOut = 'timedOut' in outcome || outcome.error.startsWith(TIMEOUT_MESSAGE);
  if (timedOut) throw new ExtensionError('timeout', `${name} ran past its limit of ${limits.timeoutMs} ms`);
  throw new ExtensionError('failed', `${name} failed: ${outcome.error.split('\nstack traceback:')[0]!}`);
}
