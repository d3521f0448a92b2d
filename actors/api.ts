// The narrow interface coordinators (actors/coordinators/) are given: what they may ask of a
// node, not the whole FerriteNode. FerriteNode implements it.
import type { FerriteConfig } from '../model/config.js';
import type { MetricInfo } from '../model/metric-info.js';
import type { Ring } from '../model/topology/index.js';
import type { CheckTagStore } from '../storage/check-tags.js';
import type { NodeBatch } from '../storage/node-storage.js';
import type { Gossip } from '../transport/gossip.js';
import type { JournalOp } from '../transport/journal-stream.js';
import type { Rpc } from '../transport/rpc.js';
import type { ClusterRouting } from './cluster/routing.js';
import type { MetricRegistry } from './node/metric-registry.js';
import type { ShardSet } from './node/shards.js';
import type { DeleteOutcome, DeleteTarget } from '../model/delete.js';

export interface NodeApi {
  readonly config: FerriteConfig;
  /** This node's id. */
  readonly identity: string;
  readonly ring: Ring;
  /** Requests to other nodes; null when standalone. */
  readonly rpc: Rpc | null;
  readonly gossip: Gossip;
  /** Who owns a metric, and asking its owners. */
  readonly routing: ClusterRouting;
  /** Every question about a metric's data or the index. */
  readonly shards: ShardSet;
  /** Names and places the metrics requests name. */
  readonly registry: MetricRegistry;
  readonly checkTags: CheckTagStore;
  knows(metric: MetricInfo): Promise<boolean>;
  deleteData(metric: MetricInfo, target: DeleteTarget, before: number, confirm: boolean, periods?: number[] | null): Promise<DeleteOutcome>;
  fullDelete(metric: MetricInfo, confirm: boolean): Promise<DeleteOutcome>;
  /** Stages `doc` for every other node in `batch`; publish with the function returned once it is written. */
  stageForEveryNode(batch: NodeBatch, op: JournalOp, doc: object): () => Promise<void>;
}

