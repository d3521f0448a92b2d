// The API described in OpenAPI 3 (@fastify/swagger) from the route schemas, served as JSON
// at /api/json and browsable at /api/ (@fastify/swagger-ui, its assets shipped in the
// package: nothing is fetched from elsewhere). Every route is listed, with a schema or
// without one, so endpoints added later appear without further work here.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { VERSION } from '../model/version.js';
import { TAG } from './schemas.js';

const ERROR_BODY = {
  type: 'object',
  'x-response-description': 'Bad request',
  description: 'Every error: a stable code (docs/errors.md) and a message naming what was wrong',
  properties: { error: { type: 'string' }, code: { type: 'string', examples: ['FER_ERR_BAD_PARAM'] } },
};

/** Registers the document and the UI; call before any route plugin is registered. */
export function registerOpenApi(app: FastifyInstance): void {
  app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'ferrite',
        version: VERSION,
        description:
          'A clustered time-series metric store speaking an IRONdb-compatible HTTP interface. Headers are matched case-insensitively; every `x-svc-*` header may also be spelled `x-snowth-*`. Errors are `{"error", "code"}` (docs/errors.md).',
      },
      tags: Object.values(TAG).map((name) => ({ name })),
    },
    transform: ({ schema, url, route }) => ({ schema: documented(schema as Record<string, unknown> | undefined, route as RouteOptions), url }),
  });
  app.register(fastifySwaggerUi, {
    routePrefix: '/api',
    // The UI would otherwise ask an online validator about the document.
    uiConfig: { validatorUrl: null, deepLinking: true },
  });
  // IRONdb serves its docs at /api/index.html.
  app.get('/api/index.html', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/api/'));
}

/** What the document shows of a route: its schema, its raw body, and the error shape. */
function documented(schema: Record<string, unknown> | undefined, route: RouteOptions): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(schema ?? {}) };
  const body = route.config?.rawBody;
  if (body !== undefined) {
    out.body = { content: Object.fromEntries(Object.entries(body.types).map(([type, what]) => [type, { schema: { type: 'string', format: 'binary', description: what } }])) };
    out.description = [out.description, `Body: ${body.description}`].filter(Boolean).join('\n\n');
  }
  out.response ??= { 200: { description: 'Success' }, '4XX': ERROR_BODY };
  return out;
}
