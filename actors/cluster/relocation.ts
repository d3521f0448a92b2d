// The REHASH step of a rebalance, and a peer's part of a rebuild (actors/cluster/rebuild.ts):
// this node walks every metric it holds and sends its stored numeric and text samples to the
// nodes `targets` names, as ordinary journal messages through the outbox. Every holder sends:
// any one of them may lack samples (it was down), and applying a sample twice changes nothing
// (one value per timestamp), so the new copy becomes the union of the old ones.
//
// Histograms are different: merging adds them up. They are sent as *sets* of their finest
// periods (model/ingest-record.ts `set`, storage/histograms.ts setPeriod): on the receiver a set
// replaces what the period got before it in the receiver's journal order, and later adds count
// on top. So a copy sent again (REHASH or a rebuild restarted after a restart) changes nothing,
// and only one holder sends them (the primary owner in a rebalance, the first other owner in a
// rebuild), so two holders' copies never race. The combination with writes that arrive on the
// receiver during the copy (dual-written in a rebalance, ordinary writes in a rebuild), for
// one add A of a period the sender S sends:
// - A applied on the receiver before S's set, and S had applied A when it read the period: the
//   set carries A and replaces the receiver's A: counted once. This is the common case (A was
//   written before the walk reached the metric), and after any restart of the walk it holds for
//   every A both nodes had applied by then.
// - A applied after the set, and S read the period before A reached it: counted once, as an add.
// - A in flight at the moment S reads the period (applied by one of S and the receiver before
//   and by the other after): counted twice or not at all. Closing that needs per-submission
//   identities across nodes (not built; README "Rebalance").
// Numeric rollup records go too, every stored period of every level, as `nnt` journal messages
// that set those periods as they are (storage/rollups.ts setLevels; from the same one sender).
// Stored periods hold what raw samples do not: `/write/nnt` records and raw data aged out of its
// retention (where rollups are also written while the raw is kept, the receiver's own rollup of
// the raw samples it is sent recomputes the same periods).
import { ownersOf, type Ring } from '../../model/topology/index.js';
import type { IngestRecord } from '../../model/ingest-record.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { AccountId, EpochMs } from '../../model/types.js';
import type { ListedMetric, RollupLevels } from '../shard/messages.js';
import type { ShardSet } from '../node/shards.js';
import type { MetricRegistry } from '../node/metric-registry.js';

/** Metrics asked of a shard at a time. */
const PAGE = 256;
/** Records per journal message: well under NATS's payload limit for ordinary samples. */
const RECORDS_PER_MESSAGE = 2_000;
/** Reads span all time up to here (ms; far below where period arithmetic loses integers). */
const FOREVER = 2 ** 52;

export interface RelocationDeps {
  shards: ShardSet;
  shardCount: number;
  /** The finest histogram rollup period, seconds: histograms are sent as its periods. */
  histogramPeriod: number;
  registry: MetricRegistry;
  /**
   * Where a metric this node holds goes: the peers to send it to, and whether this node sends
   * the kinds that go as sets (histograms and rollup records: one sender, so copies never race).
   */
  targets(metric: MetricInfo): { peers: string[]; histograms: boolean };
  /** Stages and publishes a metric's rollup periods for `peer` (an `nnt` message that sets them); the bytes sent. */
  sendRollups(peer: string, metric: MetricInfo, levels: RollupLevels): Promise<number>;
  /** Stages and publishes records for `peer`; resolves once JetStream acknowledged them, with the bytes sent. */
  send(peer: string, records: IngestRecord<MetricInfo>[]): Promise<number>;
  /** True once the rebalance was aborted: the walk stops. */
  aborted(): boolean;
  /** Counts into this tally as it goes (progress reports read it meanwhile). */
  figures?: RelocationFigures;
}

export interface RelocationFigures {
  metrics_seen: number;
  metrics_sent: number;
  records_sent: number;
  /** Check tag updates sent to joining nodes (the node sends those after the metrics). */
  check_tag_updates_sent: number;
  /** Bytes of journal message bodies sent. */
  bytes_sent: number;
}

/** An empty tally. */
export function noFigures(): RelocationFigures {
  return { metrics_seen: 0, metrics_sent: 0, records_sent: 0, check_tag_updates_sent: 0, bytes_sent: 0 };
}

/**
 * A rebalance's targets (`identity` holds the metric): the owners `next` gives it that do not
 * own it under `current`. Histograms go from the primary owner alone (merging adds them up).
 */
export function gainingOwners(identity: string, current: Ring, next: Ring): RelocationDeps['targets'] {
  return (metric) => {
    const now = ownersOf(current, metric.key);
    const ids = new Set(now.map((n) => n.id));
    return { peers: ownersOf(next, metric.key).filter((n) => !ids.has(n.id)).map((n) => n.id), histograms: now[0]?.id === identity };
  };
}

/** Sends what moves; resolves with what it did, or early (incomplete) when aborted. */
export async function relocate(deps: RelocationDeps): Promise<RelocationFigures> {
  const figures = deps.figures ?? noFigures();
  const pending = new Map<string, IngestRecord<MetricInfo>[]>();
  const flush = async (peer: string) => {
    const list = pending.get(peer);
    if (list === undefined || list.length === 0) return;
    pending.delete(peer);
    figures.bytes_sent += await deps.send(peer, list);
    figures.records_sent += list.length;
  };
  for (let shard = 0; shard < deps.shardCount; shard++) {
    let from: number | null = 0;
    while (from !== null) {
      if (deps.aborted()) return figures;
      const page: { metrics: ListedMetric[]; next: number | null } = await deps.shards.askShard(shard, 'listMetrics', from, PAGE);
      from = page.next;
      for (const listed of page.metrics) {
        figures.metrics_seen++;
        const found = deps.registry.intern(listed.accountId as AccountId, listed.uuid, listed.checkName, listed.canonical);
        if (!found.ok) continue;
        const metric = found.metric;
        const { peers: gaining, histograms } = deps.targets(metric);
        if (gaining.length === 0) continue;
        const records = await recordsOf(deps, metric, listed.types.filter((k) => k !== 'histogram' || histograms));
        const rollups = histograms && listed.types.includes('numeric') ? await deps.shards.about(metric, 'rollupLevels') : [];
        if (rollups.length > 0) {
          for (const peer of gaining) figures.bytes_sent += await deps.sendRollups(peer, metric, rollups);
          figures.records_sent += rollups.reduce((n, [, r]) => n + r.length, 0) * gaining.length;
        }
        if (records.length === 0 && rollups.length === 0) continue;
        figures.metrics_sent++;
        for (const peer of gaining) {
          let list = pending.get(peer);
          if (list === undefined) pending.set(peer, (list = []));
          list.push(...records);
          if (list.length >= RECORDS_PER_MESSAGE) await flush(peer);
        }
      }
    }
  }
  for (const peer of [...pending.keys()]) await flush(peer);
  return figures;
}

/** Every stored sample of `metric`, of each data type it has, as ingest records. */
async function recordsOf(deps: RelocationDeps, metric: MetricInfo, types: readonly string[]): Promise<IngestRecord<MetricInfo>[]> {
  const out: IngestRecord<MetricInfo>[] = [];
  for (const kind of types) {
    if (kind === 'histogram') {
      // One record per finest period, stamped at its start: the receiver files it under the
      // same period. Cumulative submissions are stored as their changes, so these go as plain ones.
      const rows = await deps.shards.about(metric, 'histograms', deps.histogramPeriod, 0, FOREVER);
      for (const [ts, bytes] of rows) out.push({ kind, metric, ts: ts as EpochMs, value: Buffer.from(bytes).toString('base64'), set: true });
      continue;
    }
    if (kind !== 'numeric' && kind !== 'text') continue;
    const series = await deps.shards.about(metric, 'read', kind, 0, FOREVER);
    series.values.forEach((value, i) => {
      const ts = series.ts[i]! as EpochMs;
      if (kind === 'numeric') out.push({ kind, metric, ts, value: value as number | bigint | null, ...(series.gens?.[i] ? { generation: series.gens[i] } : {}) });
      else out.push({ kind, metric, ts, value: value as string | null });
    });
  }
  return out;
}
