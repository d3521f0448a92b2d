// The operations console (issue 23): the page at `/`, bundled from console/ into
// dist/console by `npm run build` and served by @fastify/static, and the read-only
// `GET /console/api/*` routes it polls for figures no other endpoint exposes.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { addDiskUse, type RollupBacklog } from '../storage/figures.js';
import { NodeHistory, type Snapshot } from '../actors/node/history.js';
import type { PeerLag } from '../actors/cluster/replication.js';
import { ringShares } from '../model/topology/index.js';
import { VERSION } from '../model/version.js';
import type { Traffic } from './traffic.js';
import { TAG } from './schemas.js';

/** The built console, beside this module in dist/. */
const CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));
/** History: a snapshot every 2 s, ten minutes of them. */
const HISTORY_INTERVAL_MS = 2_000;
const HISTORY_POINTS = 300;
/** Shards' figures (disk, rollup markers counted) are read at most this often: a large backlog is many keys to scan. */
const BACKLOG_TTL_MS = 5_000;
/** A peer's figures are skipped (shown unreachable) past this. */
const PEER_TIMEOUT_MS = 1_500;

const docs = (summary: string) => ({ schema: { tags: [TAG.console], summary } });

export async function consoleRoutes(app: FastifyInstance, opts: { node: FerriteNode; traffic: Traffic }): Promise<void> {
  const { node, traffic } = opts;
  const startedAt = Date.now();
  if (existsSync(CONSOLE_DIR)) {
    // wildcard: false serves exactly the files built, so no catch-all route shadows others' 404s.
    await app.register(fastifyStatic, { root: CONSOLE_DIR, wildcard: false, index: 'index.html', schemaHide: true });
  } else {
    app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.type('text/plain').send('The console is not built: run `npm run build`.\n'));
  }

  const history = new NodeHistory(() => snapshot(node, traffic), HISTORY_INTERVAL_MS, HISTORY_POINTS);
  history.start();
  app.addHook('onClose', async () => history.stop());

  const shardFigures = memoize(BACKLOG_TTL_MS, () => node.shards.askAll('figures'));
  const cardinality = memoize(BACKLOG_TTL_MS, () => node.limits.figures());
  const overview = async () => ({
    identity: node.identity,
    version: VERSION,
    node_version: process.version,
    started_at: startedAt / 1000,
    uptime_s: (Date.now() - startedAt) / 1000,
    rollups: node.config.rollups.map((l) => l.period),
    histogram_rollups: node.config.histogramRollups.map((l) => l.period),
    memory: { rss_bytes: process.memoryUsage.rss(), heap_used_bytes: process.memoryUsage().heapUsed },
    disk: addDiskUse([await node.storage.diskUse(), ...(await shardFigures()).map((f) => f.disk)]),
    journal: { ...(await node.storage.journalBacklog()), cluster: await node.replicationState() },
    rollup_backlog: sumBacklogs((await shardFigures()).map((f) => f.backlog)),
    cardinality: await cardinality(),
    counters: { records: node.stats.recordsIngested, ingest_requests: node.stats.requestsIngested, http_requests: traffic.requests, http_errors: traffic.errors, journal_records_applied: node.stats.journalRecordsApplied },
  });

  app.get('/console/api/overview', docs("This node's figures: identity, memory, disk per column family, journal and rollup backlog, series per account and top checks, counters"), overview);

  app.get('/console/api/history', docs('The last ten minutes of ingest rates, RSS and replication lag, every 2 s'), async () => history.history());

  app.get('/console/api/nodes', docs('Every topology node: gossip state and its /console/api/overview (or why it could not be read)'), async () => {
    const gossip = new Map(node.gossip.entries().map((e) => [e.id, e]));
    const shares = new Map(ringShares(node.ring).map((s) => [s.id, s]));
    const topology = node.ring.topology;
    const nodes = await Promise.all(
      topology.nodes.map(async (n) => {
        const self = n.id === node.identity;
        const age = Number(gossip.get(n.id)?.gossip_age ?? '-1');
        const base = { id: n.id, address: n.address, port: n.port, apiport: n.apiport, weight: n.weight, side: n.side, self, alive: node.gossip.isAlive(n.id), gossip_age: age < 0 ? null : age, share: shares.get(n.id) };
        if (self) return { ...base, overview: await overview() };
        try {
          const res = await fetch(`http://${n.address}:${n.apiport}/console/api/overview`, { signal: AbortSignal.timeout(PEER_TIMEOUT_MS) });
          if (!res.ok) return { ...base, error: `HTTP ${res.status}` };
          return { ...base, overview: await res.json() };
        } catch (error) {
          return { ...base, error: (error as Error).message };
        }
      }),
    );
    return { identity: node.identity, topology: { hash: topology.hash, write_copies: topology.writeCopies }, nodes };
  });
}

async function snapshot(node: FerriteNode, traffic: Traffic): Promise<Snapshot> {
  const replication = await node.replicationState();
  return {
    at: Date.now(),
    counters: {
      records: node.stats.recordsIngested,
      ingest_requests: node.stats.requestsIngested,
      http_requests: traffic.requests,
      http_errors: traffic.errors,
      journal_records_applied: node.stats.journalRecordsApplied,
    },
    gauges: { rss_bytes: process.memoryUsage.rss(), journal_pending: (replication?.journal_pending as number | null | undefined) ?? null },
    peers: replication === null ? null : (replication.peers as Record<string, PeerLag>),
  };
}

function sumBacklogs(backlogs: readonly RollupBacklog[]): RollupBacklog {
  return {
    numeric_windows: backlogs.reduce((n, b) => n + b.numeric_windows, 0),
    histogram_periods: backlogs.reduce((n, b) => n + b.histogram_periods, 0),
    capped: backlogs.some((b) => b.capped),
  };
}

/** `compute`'s last answer while younger than `ttlMs` (callers in the meantime share it). */
function memoize<T>(ttlMs: number, compute: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    if (last === null || Date.now() - last.at > ttlMs) {
      const value = compute();
      last = { at: Date.now(), value };
      value.catch(() => (last = null));
    }
    return last.value;
  };
}
