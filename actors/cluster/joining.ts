// A node joining a cluster in a rebalance (`ferrite serve --join`): started under the new
// topology, before the old nodes have switched to it. Until they have, it holds only part of
// the data, and a write routed by it alone would reach only the new owners, while nodes not yet
// switched read from the old ones. So it forwards client requests (http/join-forward.ts) to a
// node of its topology that does not run it yet — one its gossip has not heard: nodes gossip on
// the subject of the topology they run, and old nodes move to the new one when they switch.
// Such a node routes by the old ring until it switches, and writes to both rings' owners
// throughout the rebalance (actors/cluster/replication.ts), so what it answers is complete and
// what it is sent reaches every owner. Once every node of the topology is heard, every node has
// switched (and every walk is done: none switches before), the join is recorded as done in the
// node store and the node answers for itself from then on, also after restarts.
import type { Logger } from 'pino';
import type { Topology, TopologyNode } from '../../model/topology/index.js';
import type { NodeStorage } from '../../storage/node-storage.js';
import type { Gossip } from '../../transport/gossip.js';

/** What is stored under `state` `join` (docs/format/storage.md). */
interface Stored {
  state: 'joining' | 'joined';
  /** Epoch ms when the join was asked for, and when it was done. */
  started: number;
  finished?: number;
}

/** `/state` `join`. */
export interface JoinReport {
  state: 'joining' | 'joined';
  started: string;
  finished: string | null;
  /** While joining: the nodes requests may be forwarded to (not yet running this topology). */
  forwarding_to: string[];
  /** Client requests forwarded so far (since this start). */
  forwarded: number;
}

export class Joining {
  private finishing = false;
  /** Client requests forwarded since start. */
  forwarded = 0;

  private constructor(
    private readonly storage: NodeStorage,
    private readonly log: Logger,
    private stored: Stored | null,
  ) {}

  /** The join state of this node: resumed when one was under way, started when `requested` and none was done here. */
  static async open(storage: NodeStorage, requested: boolean, log: Logger): Promise<Joining> {
    const raw = await storage.joinState();
    const j = new Joining(storage, log, raw === null ? null : (JSON.parse(raw) as Stored));
    if (j.stored === null && requested) {
      await j.save({ state: 'joining', started: Date.now() });
      log.info('joining: client requests go to nodes not yet running this topology until every node runs it');
    }
    return j;
  }

  /** True until the join under way is done. */
  get active(): boolean {
    return this.stored?.state === 'joining';
  }

  /**
   * The nodes of `topology` to forward a client request to: those `gossip` has not heard (they
   * run another topology, or are down). None left: the join is done.
   */
  targets(topology: Topology, gossip: Gossip, identity: string): TopologyNode[] {
    if (!this.active) return [];
    const unheard = topology.nodes.filter((n) => n.id !== identity && !gossip.isAlive(n.id));
    if (unheard.length === 0) void this.finish();
    return unheard;
  }

  /** `/state` `join` (null: never asked for); like a request, it notices that the join is done. */
  report(topology: Topology, gossip: Gossip, identity: string): JoinReport | null {
    const forwarding = this.targets(topology, gossip, identity).map((n) => n.id);
    const s = this.stored;
    if (s === null) return null;
    const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
    return { state: s.state, started: iso(s.started)!, finished: iso(s.finished), forwarding_to: forwarding, forwarded: this.forwarded };
  }

  private async finish(): Promise<void> {
    if (this.finishing || this.stored === null) return;
    this.finishing = true;
    try {
      await this.save({ ...this.stored, state: 'joined', finished: Date.now() });
      this.log.info({ forwarded: this.forwarded }, 'joined: every node runs this topology; answering for itself from now on');
    } finally {
      this.finishing = false;
    }
  }

  private async save(next: Stored): Promise<void> {
    await this.storage.storeJoinState(JSON.stringify(next));
    this.stored = next;
  }
}
