// The Fastify edge: one encapsulated plugin per endpoint family, one body parser, and a
// single error handler that is the only place writing `{"error": ...}`.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr, FerriteError } from '../model/errors.js';
import { adminRoutes } from './admin.js';
import { registerBodyReader } from './body.js';
import { registerLoadShedding } from './load-shedding.js';
import { deleteRoutes } from './delete.js';
import { fetchRoutes } from './fetch.js';
import { topologyRoutes } from './topology.js';
import { rebalanceRoutes } from './rebalance.js';
import { caqlRoutes } from './caql.js';
import { extensionRoutes } from './extensions.js';
import { findRoutes } from './find.js';
import { histogramRoutes } from './histogram.js';
import { rollupRoutes } from './rollup.js';
import { rawRoutes } from './raw.js';
import { prometheusRemoteRoutes } from './prometheus-remote.js';
import { openTsdbRoutes } from './opentsdb.js';
import { otlpRoutes } from './otlp.js';
import { prometheusApiRoutes } from './prometheus-api.js';
import { textRoutes } from './text.js';
import { surrogateRoutes } from './surrogate.js';
import { checkTagRoutes } from './check-tags.js';
import { graphiteRoutes } from './graphite.js';
import { consoleRoutes } from './console.js';
import { countTraffic } from './traffic.js';
import { registerOpenApi } from './openapi.js';
import { registerJoinForwarding } from './join-forward.js';
import { isValidationError, validationError } from './validation.js';

export function buildServer(node: FerriteNode, logger: Logger): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: node.config.bodyLimitBytes,
    // Per-request lines at ingest rates would cost more than the requests; errors still log.
    logController: new LogController({ disableRequestLogging: true }),
    // Reads put whole metric names (which may hold '/') in the path.
    routerOptions: { maxParamLength: 8192 },
  });

  registerBodyReader(app, node.config.bodyLimitBytes);

  // IRONdb clients send bare media types (`x-irondb-fetch-flatbuffer`), which Fastify's
  // parser would refuse with 415 before any route sees them: read them as `application/…`.
  app.addHook('onRequest', async (req) => {
    const type = req.headers['content-type'];
    if (type !== undefined && type !== '' && !type.includes('/')) req.headers['content-type'] = `application/${type}`;
  });

  registerLoadShedding(app, node.admission);
  registerJoinForwarding(app, node);

  app.setErrorHandler((error: FastifyError | FerriteError, req, reply) => {
    if (error instanceof FerriteError) {
      // Every 503 is a passing condition (load, a restarting shard): a warning, no stack (a node
      // shedding load refuses many writes a second), and the client is told when to try again.
      if (error.status === 503) req.log.warn({ code: error.code }, error.message);
      else if (error.status >= 500) req.log.error({ err: error }, error.message);
      if (error.status === 503 && !reply.hasHeader('retry-after')) void reply.header('retry-after', '1');
      return reply.status(error.status).send(errorBody(error));
    }
    // A request that fails its route schema gets the code and message its handler would give.
    if (isValidationError(error)) return reply.status(400).send(errorBody(validationError(error, req)));
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.status(413).send(errorBody(ferr('FER_ERR_BODY_TOO_LARGE', node.config.bodyLimitBytes)));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      // Fastify's own refusal (e.g. an empty Content-Type with a body), under the code that says 415.
      return reply.status(415).send(errorBody(ferr('FER_ERR_UNSUPPORTED_MEDIA_TYPE', `'${req.headers['content-type'] ?? ''}'`)));
    }
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) req.log.error({ err: error }, 'request failed');
    const wrapped = status >= 500 ? ferr('FER_ERR_BUG', error.message) : ferr('FER_ERR_BAD_BODY', error.message);
    return reply.status(status).send(errorBody(wrapped));
  });
  app.setNotFoundHandler((req, reply) => reply.status(404).send(errorBody(ferr('FER_ERR_NOT_FOUND', req.method, req.url))));

  const traffic = countTraffic(app);
  registerOpenApi(app);
  app.register(rawRoutes, { node });
  app.register(textRoutes, { node });
  app.register(adminRoutes, { node });
  app.register(histogramRoutes, { node });
  app.register(rollupRoutes, { node });
  app.register(findRoutes, { node });
  app.register(deleteRoutes, { node });
  app.register(fetchRoutes, { node });
  app.register(topologyRoutes, { node });
  app.register(rebalanceRoutes, { node });
  app.register(caqlRoutes, { node });
  app.register(extensionRoutes, { node });
  app.register(surrogateRoutes, { node });
  app.register(checkTagRoutes, { node });
  app.register(graphiteRoutes, { node });
  app.register(prometheusRemoteRoutes, { node });
  app.register(openTsdbRoutes, { node });
  app.register(otlpRoutes, { node });
  app.register(prometheusApiRoutes, { node });
  app.register(consoleRoutes, { node, traffic });
  return app;
}

function errorBody(error: FerriteError): { error: string; code: string } {
  return { error: error.message, code: error.code };
}
