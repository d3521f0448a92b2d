// The partition actor: owns one slice of the metrics (DESIGN.md "A metric and its
// partition"). Because nact hands it one message at a time, no two writers ever race
// on a metric, and a read sees every write dispatched before it.
import nact, { type Ref } from 'nact';
import { leadRunComplete, selectTextRows, type TextReadOptions, type TextRow } from '../../model/text-read.js';
import { concatSeries, type Series } from '../../model/series.js';
import type { DataKind } from '../../model/ingest-record.js';
import type { LatestValues, Reply, PartitionMsg } from './messages.js';
import type { BufferValue } from './window-buffer.js';
import type { MetricInfo } from '../metric-info.js';
import { PartitionCore, type PartitionDeps } from './partition-core.js';

export type PartitionRef = Ref<PartitionMsg>;

export interface PartitionHooks {
  /** Called when applying or sealing fails: the node logs it and stops acknowledging writes. */
  onFault(partition: number, error: unknown): void;
  /** Called after an `apply` message, whatever its outcome (load shedding counts pending records). */
  onApplied(records: number): void;
}

export function spawnPartition(parent: Ref<any>, deps: PartitionDeps, hooks: PartitionHooks): PartitionRef {
  const core = new PartitionCore(deps);
  const handle = async (msg: PartitionMsg): Promise<void> => {
    switch (msg.type) {
      case 'apply':
        try {
          if (core.apply(msg.seq, msg.samples)) await core.sealDue();
        } catch (error) {
          hooks.onFault(deps.index, error);
        } finally {
          hooks.onApplied(msg.samples.size);
        }
        return;
      case 'checkpoint':
        return reply(msg.replyTo, async () => {
          await core.sealDue();
          await core.rollUp(msg.journalCut);
          return core.lowWater();
        });
      case 'sealAll':
        return reply(msg.replyTo, async () => {
          await core.sealAll();
          return core.lowWater();
        });
      case 'read':
        return reply(msg.replyTo, () => core.read(msg.metric, msg.kind, msg.start, msg.end));
      case 'readHistograms':
        return reply(msg.replyTo, () => core.readHistograms(msg.metric, msg.period, msg.start, msg.end));
      case 'activity':
        return reply(msg.replyTo, () => core.activity.windows(msg.metrics));
      case 'setActivity':
        return reply(msg.replyTo, () => core.activity.replace(msg.metric.id, msg.metric.idHex, msg.windows));
      case 'latest':
        return reply(msg.replyTo, () => latest(core, msg.metric, msg.kinds));
      case 'delete':
        return reply(msg.replyTo, async () => {
          if (!(await core.hasDataBefore(msg.metric, msg.kind, msg.before, msg.periods))) return 'no content' as const;
          if (!msg.confirm) return 'found' as const;
          await core.deleteBefore(msg.metric, msg.kind, msg.before, { before: msg.before, seq: msg.seq }, msg.periods);
          return 'deleted' as const;
        });
      case 'readRollups':
        return reply(msg.replyTo, () => core.readRollups(msg.metric, msg.spanMs, msg.start, msg.end, msg.engine, msg.columns));
      case 'writeRollups':
        return reply(msg.replyTo, () => core.writeRollups(msg.metric, msg.records));
      case 'forget':
        return reply(msg.replyTo, () => core.forget(msg.metric));
      case 'readText':
        return reply(msg.replyTo, () => readText(core, msg.metric, msg.options));
    }
  };
  return nact.spawn(parent, async (state: null, msg: PartitionMsg) => {
    await handle(msg);
    return state;
  }, `partition-${deps.index}`, { initialState: null });
}

async function reply<T>(to: Ref<Reply<T>>, work: () => Promise<T>): Promise<void> {
  let answer: Reply<T>;
  try {
    answer = { ok: true, value: await work() };
  } catch (error) {
    answer = { ok: false, error };
  }
  nact.dispatch(to, answer);
}

/** Reads back from the newest data (far past any real timestamp) until two samples are in hand. */
const LATEST_HORIZON = 2 ** 52;

async function latest(core: PartitionCore, metric: MetricInfo, kinds: DataKind[]): Promise<LatestValues> {
  const out: LatestValues = {};
  for (const kind of kinds) {
    // Histograms are not stored as samples; their latest values are not tracked.
    if (kind === 'histogram') continue;
    const s = await core.readBackwards(metric, kind, LATEST_HORIZON, (got) => got.ts.length >= 2);
    const from = Math.max(0, s.ts.length - 2);
    out[kind] = s.ts.slice(from).map((ts, i) => [ts, s.values[from + i]!] as [number, BufferValue | null]);
  }
  return out;
}

async function readText(core: PartitionCore, metric: MetricInfo, options: TextReadOptions): Promise<TextRow[]> {
  const inRange = (await core.read(metric, 'text', options.start, options.end)) as Series<string | null>;
  if (options.specificRange || !options.lead || inRange.ts[0] === options.start) return selectTextRows(inRange, options);
  // The lead row is the first sample of the run in force at start: look back (first
  // within start's window, then window by window) until the run's beginning is in hand.
  const windowStart = options.start - (options.start % core.span);
  const sameWindow = (await core.read(metric, 'text', windowStart, options.start)) as Series<string | null>;
  const complete = (s: Series<string | null>) => leadRunComplete(s, options.start);
  const older = complete(sameWindow)
    ? { ts: [], values: [] }
    : ((await core.readBackwards(metric, 'text', options.start, (s) =>
        complete(concatSeries([s as Series<string | null>, sameWindow])),
      )) as Series<string | null>);
  return selectTextRows(concatSeries<string | null>([older, sameWindow, inRange]), options);
}
