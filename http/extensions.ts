// Lua extensions over HTTP (issue 10): `GET /extension/lua` lists every extension (the
// built-in caql_v1 included); `GET|POST /extension/lua/<name>` (also under /public/) runs
// one with its params from the query string or a JSON body.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { extensionApi } from '../actors/coordinators/extension-api.js';
import type { FerriteNode } from '../actors/node/node.js';
import { CaqlUserError } from '../caql/errors.js';
import { ExtensionError, loadExtensions, runExtension, validateParams } from '../extensions/registry.js';
import { stopSpareWorker } from '../extensions/runner.js';
import { ferr } from '../model/errors.js';
import { CAQL_EXTENSION, CAQL_METHOD, requestParams } from './caql-request.js';
import { accountHeader } from './headers.js';
import { accountHeaders, fields, JSON_BODY, str, TAG } from './schemas.js';

export async function extensionRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  const limits = { timeoutMs: node.config.luaTimeoutMs, memoryBytes: node.config.luaMemoryBytes };
  const extensions = await loadExtensions(node.config.extensionsDir, limits, [CAQL_METHOD], app.log as never);
  app.addHook('onClose', stopSpareWorker);

  app.get('/extension/lua', { schema: { tags: [TAG.extensions], summary: 'Every extension: {<name>: {params: {<p>: {name, type}}, description}}' } }, async () => {
    const listing: Record<string, unknown> = { [CAQL_METHOD]: CAQL_EXTENSION };
    for (const ext of extensions.values()) listing[ext.name] = { params: ext.params, description: ext.description };
    return listing;
  });

  for (const url of ['/extension/lua/:name', '/extension/lua/public/:name']) {
    app.route({
      method: ['GET', 'POST'],
      url,
      schema: {
        tags: [TAG.extensions],
        summary: "Run a Lua extension with its params (query string and/or a JSON body); its return value is the answer",
        params: fields({ name: str('the extension (GET /extension/lua lists them)') }, ['name']),
        headers: fields(accountHeaders),
      },
      config: { rawBody: { description: 'POST: params as a JSON object', types: { [JSON_BODY]: '{<param>: value, ...}' } } },
      handler: async (req, reply) => {
        const name = (req.params as { name: string }).name;
        const ext = extensions.get(name);
        if (ext === undefined) throw ferr('FER_ERR_UNKNOWN_EXTENSION', name);
        try {
          const params = validateParams(ext, bodyParams(req));
          const json = await runExtension(ext, params, extensionApi(node, accountHeader(req)), limits);
          return reply.type('application/json').send(json);
        } catch (error) {
          if (!(error instanceof ExtensionError)) throw error;
          if (error.kind === 'param') throw ferr('FER_ERR_BAD_PARAM', name, error.message);
          if (error.kind === 'timeout') throw ferr('FER_ERR_EXTENSION_TIMEOUT', error.message);
          throw ferr('FER_ERR_EXTENSION_FAILED', error.message);
        }
      },
    });
  }
}

function bodyParams(req: FastifyRequest): Record<string, unknown> {
  try {
    return requestParams(req);
  } catch (error) {
    if (error instanceof CaqlUserError) throw ferr('FER_ERR_BAD_BODY', error.message);
    throw error;
  }
}
