// `GET /stats.json` and `GET /state` in IRONdb's shapes (irondb-reference §10): existing
// clients (gosnowth, the Grafana data source) call these before anything else.
import { createWriteStream, statSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { writeHeapSnapshot } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { VERSION } from '../model/version.js';
import { AdjustableClock } from '../model/clock.js';
import { ferr } from '../model/errors.js';
import type { PeerLag } from '../actors/cluster/replication.js';
import { TAG } from './schemas.js';
import { runnerFigures } from '../extensions/runner.js';
import { BackupError } from '../storage/backup.js';
import { parseJsonBody } from '../model/json-body.js';
import { bodyText } from './request.js';

const s = (value: string | number) => ({ _type: 's', _value: String(value) });
const n = (value: number) => ({ _type: 'L', _value: value });

export async function adminRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;

  app.get('/stats.json', { schema: { tags: [TAG.admin], summary: 'Identity, version, topology and ingest counters in IRONdb shape ({_type, _value} entries)' } }, async () => ({
    application: s('ferrite'),
    identity: s(node.identity),
    version: s(VERSION),
    semver: s(VERSION),
    node_version: s(process.version),
    topology: { current: s(node.ring.topology.hash), next: s('-') },
    ingest: {
      requests: n(node.stats.requestsIngested),
      records: n(node.stats.recordsIngested),
      journal_replayed: n(node.stats.journalEntriesReplayed),
      journal_records_applied: n(node.stats.journalRecordsApplied),
    },
  }));

  if (node.clock instanceof AdjustableClock) {
    const clock = node.clock;
    // Tests only (config testClock): moves the gossip clock forward instead of waiting.
    app.post('/admin/test-clock', { schema: { hide: true } }, async (req) => {
      const ms = Number((req.query as { advance_ms?: string }).advance_ms);
      if (!Number.isSafeInteger(ms) || ms < 0) throw ferr('FER_ERR_BAD_PARAM', 'advance_ms', 'must be a non-negative integer');
      clock.advance(ms);
      return { now: clock.now() };
    });
  }

  // Operators finding what a node's memory holds: the main thread's, one shard worker's or one parse worker's V8 heap, written into the data directory.
  app.post('/admin/heap-snapshot', { schema: { tags: [TAG.admin], summary: "Writes a V8 heap snapshot of the main thread (`?of=main`), of one shard's worker (`?of=<shard>`) or of one parse worker (`?of=parse<n>`) into the data directory; answers its path" } }, async (req) => {
    const of = (req.query as { of?: string }).of ?? 'main';
    const snapshot = heapSource(node, of);
    if (snapshot === null) throw ferr('FER_ERR_BAD_PARAM', 'of', `must be main, a shard number below ${node.shards.count}, or parse<n> with n below ${node.ingestPool.workers}`);
    const file = path.join(node.config.dataDir, `heap-${of}-${Date.now()}.heapsnapshot`);
    if (snapshot === 'main') writeHeapSnapshot(file);
    else await pipeline(await snapshot(), createWriteStream(file));
    return { path: file, bytes: statSync(file).size };
  });

  app.post('/admin/backup', { schema: { tags: [TAG.admin], summary: 'Copies this node\'s data as of now into `dest` (a new, empty absolute directory on this machine); writes go on. Body or query: {dest}' } }, async (req) => {
    const text = bodyText(req);
    const parsed = text === '' ? ({ ok: true, value: {} } as const) : parseJsonBody(text);
    if (!parsed.ok) throw ferr('FER_ERR_BAD_BODY', `backup request: ${parsed.reason}`);
    const dest = (parsed.value as { dest?: unknown } | null)?.dest ?? (req.query as { dest?: string }).dest;
    if (typeof dest !== 'string' || dest === '') throw ferr('FER_ERR_BAD_PARAM', 'dest', 'must name the directory to write the backup into');
    try {
      return await node.backup(dest);
    } catch (error) {
      if (error instanceof BackupError) throw ferr('FER_ERR_BAD_PARAM', 'dest', error.message);
      throw error;
    }
  });

  const rollups = node.config.rollups.map((l) => l.period);
  const histogramRollups = node.config.histogramRollups.map((l) => l.period);
  app.get('/state', { schema: { tags: [TAG.admin], summary: 'Identity, topology, rollup levels, rusage, replication lag and features' } }, async () => {
    const usage = process.resourceUsage();
    const replication = await node.replicationState();
    const lags = Object.values((replication?.peers ?? {}) as Record<string, PeerLag>).map((l) => l.oldest_unconfirmed_age);
    const memory = process.memoryUsage();
    return {
      identity: node.identity,
      current: node.ring.topology.hash,
      next: '-',
      base_rollup: rollups[0],
      rollups,
      nntbs: { rollups, retention: node.config.rollups.map((l) => l.retention), raw_retention: node.config.rawRetention },
      text: { rollups: [] },
      histogram: { rollups: histogramRollups, retention: node.config.histogramRollups.map((l) => l.retention) },
      'rusage.utime': usage.userCPUTime / 1e6,
      'rusage.stime': usage.systemCPUTime / 1e6,
      'rusage.maxrss': usage.maxRSS,
      // Seconds the oldest unconfirmed journal message to each peer has waited.
      max_peer_lag: lags.length === 0 ? 0 : Math.max(...lags),
      avg_peer_lag: lags.length === 0 ? 0 : lags.reduce((a, b) => a + b, 0) / lags.length,
      ...(replication === null ? {} : { replication }),
      rebalance: node.rebalance.progressReport(),
      ...optional('join', node.joining.report(node.ring.topology, node.gossip, node.identity)),
      ...(node.rebuild.report() === null ? {} : { rebuild: node.rebuild.report() }),
      ...(node.rebuildWalks.report() === null ? {} : { rebuild_walks: node.rebuildWalks.report() }),
      checkpoint: node.checkpoints.report(),
      admission: node.admission.report(),
      fetch_cache: node.fetchAnswers.report(),
      ...(await node.shardReport()),
      // Series per account and the checks with the most (cardinality), with the limits in force.
      cardinality: await node.limits.figures(),
      parse_workers: (await node.ingestPool.heaps()).map((heap) => ({ heap_used_bytes: heap.used, heap_committed_bytes: heap.committed })),
      ...(node.storage.syncFigures === null ? {} : { sync_writes: node.storage.syncFigures }),
      extensions: { workers_started: runnerFigures.spawned, calls_in_reused_workers: runnerFigures.reused, runaway_workers_ended: runnerFigures.runaway },
      heap_used_bytes: memory.heapUsed,
      heap_committed_bytes: memory.heapTotal,
      array_buffers_bytes: memory.arrayBuffers,
      rss_bytes: memory.rss,
      features: {
        'text:store': '1',
        'histogram:store': '1',
        'nnt:store': '1',
        'nnt:second_order': '1',
        'histogram:dynamic_rollups': '0',
        features: '1',
      },
      version: VERSION,
      // The runtime actually serving, so an operator sees a node started on an old Node.
      node_version: process.version,
      application: 'ferrite',
    };
  });
}

/** Where `?of=` takes a heap snapshot: the main thread, a shard worker or a parse worker; null when it names none. */
function heapSource(node: FerriteNode, of: string): 'main' | (() => Promise<NodeJS.ReadableStream>) | null {
  if (of === 'main') return 'main';
  const n = Number(of.startsWith('parse') ? of.slice(5) : of);
  if (!Number.isSafeInteger(n) || n < 0 || of === '' || of === 'parse') return null;
  if (of.startsWith('parse')) return n < node.ingestPool.workers ? () => node.ingestPool.heapSnapshot(n) : null;
  return n < node.shards.count ? () => node.shards.heapSnapshot(n) : null;
}

/** `{[key]: value}`, or nothing when `value` is null. */
function optional<T>(key: string, value: T | null): Record<string, T> {
  return value === null ? {} : { [key]: value };
}
