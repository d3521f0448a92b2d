// Prometheus remote storage (irondb-reference §5.4): `POST /module/prometheus/write/<acct>/<uuid>`
// (remote-write 1.0: a snappy-compressed protobuf WriteRequest) and
// `POST /module/prometheus/read/<acct>/<uuid>` (ReadRequest → SAMPLES ReadResponse).
// Labels become stream tags, `__name__` the metric name; samples are stored like `/raw`
// numeric records, durably before the 204.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { readSamples, selectSeries } from '../actors/coordinators/sources/prometheus.js';
import { ferr } from '../model/errors.js';
import { compareLabels, seriesSamples, sortedLabels } from '../model/prometheus/labels.js';
import { MatcherError } from '../model/prometheus/matchers.js';
import { decodeReadRequest, decodeWriteRequest, encodeReadResponse, RemoteFormatError, type RemoteQuery, type RemoteSample } from '../model/prometheus/remote-codec.js';
import type { Labels } from '../model/prometheus/types.js';
import { taggedRecords } from '../model/tagged-sample.js';
import { requireSomething, withinLimits } from './ingest-reply.js';
import { scopeFromPath, taggedContext, type CheckScope } from './tagged-ingest.js';

export async function prometheusRemoteRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.post('/module/prometheus/write/:account/:uuid', async (req, reply) => {
    const scope = pathScope(req);
    const series = decoded(() => decodeWriteRequest(snappyBody(req), node.config.bodyLimitBytes));
    const items = series.map((s) => (s.histograms > 0 ? `series ${JSON.stringify(s.labels)} carries native histograms, which ferrite does not store` : seriesSamples(s)));
    if (series.length === 0) return reply.status(204).send();
    const { records, errors, admission } = await withinLimits(node, taggedRecords(items, taggedContext(node, scope)));
    try {
      requireSomething(records.length, errors, 'item');
      await node.ingest(records, admission);
    } finally {
      admission?.release();
    }
    if (errors.length > 0) req.log.warn({ rejectedSeries: errors.length, first: errors[0] }, 'remote write: some series were not stored');
    return reply.status(204).send();
  });

  app.post('/module/prometheus/read/:account/:uuid', async (req, reply) => {
    const scope = pathScope(req);
    const queries = decoded(() => decodeReadRequest(snappyBody(req), node.config.bodyLimitBytes));
    const results = await Promise.all(queries.map((q) => answerQuery(node, scope, q)));
    return reply.type('application/x-protobuf').header('content-encoding', 'snappy').send(Buffer.from(encodeReadResponse(results)));
  });
}

function pathScope(req: FastifyRequest): CheckScope {
  const { account, uuid } = req.params as { account: string; uuid: string };
  return scopeFromPath(account, uuid);
}

/** The raw body; remote storage bodies are snappy blocks, so any other content coding is refused. */
function snappyBody(req: FastifyRequest): Buffer {
  const coding = (req.headers['content-encoding'] ?? 'snappy').trim().toLowerCase();
  if (coding !== 'snappy') throw ferr('FER_ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${coding} (remote storage bodies are snappy)`);
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

function decoded<T>(decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof RemoteFormatError) throw ferr('FER_ERR_BAD_BODY', error.message);
    throw error;
  }
}

/** One query's numeric series with their samples in [start, end] (gap markers left out). */
async function answerQuery(node: FerriteNode, scope: CheckScope, q: RemoteQuery): Promise<{ labels: Labels; samples: RemoteSample[] }[]> {
  let refs;
  try {
    refs = await selectSeries(node, { account: scope.account, uuid: scope.uuid }, q.matchers, q.startMs, q.endMs);
  } catch (error) {
    if (error instanceof MatcherError) throw ferr('FER_ERR_BAD_BODY', error.message);
    throw error;
  }
  const numeric = refs.filter((r) => r.kind === 'numeric');
  const series = await Promise.all(
    numeric.map(async (ref) => {
      const data = await readSamples(node, ref, q.startMs, q.endMs);
      const samples: RemoteSample[] = [];
      data.ts.forEach((t, i) => {
        const v = data.values[i];
        if (typeof v === 'number') samples.push({ timestamp: t, value: v });
      });
      return { labels: sortedLabels(ref.labels), samples };
    }),
  );
  return series.filter((s) => s.samples.length > 0).sort((a, b) => compareLabels(a.labels, b.labels));
}

/** Prometheus keeps labels sorted by name, and series sorted by their labels. */
