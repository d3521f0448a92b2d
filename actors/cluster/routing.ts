// Which node owns a metric, and asking its owners (DESIGN.md "Next shape": routing beside
// replication). A standalone node owns everything and has no one to ask.
import { ferr } from '../../model/errors.js';
import type { Ring, TopologyNode } from '../../model/topology/index.js';
import type { Gossip } from '../../transport/gossip.js';
import type { Rpc } from '../../transport/rpc.js';
import type { MetricInfo } from '../../model/metric-info.js';
import type { Replication } from './replication.js';

export class ClusterRouting {
  constructor(
    private readonly identity: string,
    private readonly ring: Ring,
    private readonly gossip: Gossip,
    /** Null unless the topology has several nodes. */
    private readonly replication: Replication | null,
    private readonly rpc: Rpc | null,
    private readonly peerTimeoutMs: number,
  ) {}

  /** True unless this node is a cluster member that is not among the metric's owners. */
  owns(metric: Pick<MetricInfo, 'key'>): boolean {
    return this.replication?.owns(metric) ?? true;
  }

  /** The metric's owners, primary first (this node alone when standalone). */
  ownersOf(metric: Pick<MetricInfo, 'key'>): TopologyNode[] {
    if (this.replication === null) return this.ring.topology.nodes.filter((n) => n.id === this.identity);
    const ids = this.replication.ownersOf(metric);
    return ids.map((id) => this.ring.topology.nodes.find((n) => n.id === id)!);
  }

  /**
   * True when a read of `metric` is answered here: this node owns it and is not rebuilding
   * (a rebuilding node's data is incomplete until the rebuild is done).
   */
  readsLocally(metric: Pick<MetricInfo, 'key'>): boolean {
    return this.owns(metric) && this.gossip.serves(this.identity);
  }

  /** The metric's owners: those gossip has heard from recently and that are not rebuilding first. */
  liveOwners(metric: Pick<MetricInfo, 'key'>): TopologyNode[] {
    const owners = this.ownersOf(metric);
    return [...owners.filter((o) => this.gossip.serves(o.id)), ...owners.filter((o) => !this.gossip.serves(o.id))];
  }

  /** Asks the metric's owners in turn (live ones first), each for up to peerTimeoutMs, until one answers `op`. */
  async askOwners<T>(metric: MetricInfo, op: string, payload: unknown): Promise<T> {
    const problems: string[] = [];
    for (const owner of this.liveOwners(metric)) {
      if (owner.id === this.identity || this.rpc === null) continue;
      try {
        return await this.rpc.call<T>(owner.id, op, payload, this.peerTimeoutMs);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    throw ferr('FER_ERR_NO_OWNER', metric.name.canonical, problems.join('; ') || 'no other owner');
  }
}
