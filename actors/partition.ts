// The partition actor: owns one slice of the metrics (DESIGN.md "A metric and its
// partition"). Because nact hands it one message at a time, no two writers ever race
// on a metric, and a read sees every write dispatched before it.
import nact, { type Ref } from 'nact';
import { leadRunComplete, selectTextRows, type TextReadOptions, type TextRow } from '../model/text-read.js';
import { concatSeries, type Series } from '../model/series.js';
import type { Reply, PartitionMsg } from './messages.js';
import type { MetricInfo } from './metric-info.js';
import { PartitionCore, type PartitionDeps } from './partition-core.js';

export type PartitionRef = Ref<PartitionMsg>;

export interface PartitionHooks {
  /** Called when applying or sealing fails: the node logs it and stops acknowledging writes. */
  onFault(partition: number, error: unknown): void;
}

export function spawnPartition(parent: Ref<any>, deps: PartitionDeps, hooks: PartitionHooks): PartitionRef {
  const core = new PartitionCore(deps);
  const handle = async (msg: PartitionMsg): Promise<void> => {
    switch (msg.type) {
      case 'apply':
        try {
          if (core.apply(msg.seq, msg.records)) await core.sealDue();
        } catch (error) {
          hooks.onFault(deps.index, error);
        }
        return;
      case 'checkpoint':
        return reply(msg.replyTo, async () => {
          await core.sealDue();
          return core.lowWater();
        });
      case 'sealAll':
        return reply(msg.replyTo, async () => {
          await core.sealAll();
          return core.lowWater();
        });
      case 'read':
        return reply(msg.replyTo, () => core.read(msg.metric, msg.kind, msg.start, msg.end));
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
