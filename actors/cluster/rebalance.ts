// A node's rebalance to a new topology, in IRONdb's terms (irondb-reference §8.4, IRONdb's
// api/rebalance.md): `POST /rebalance/activate/<hash>` starts one to a topology loaded with
// `POST /topology/<hash>`, `GET /rebalance/state` reports `{current, next, state}`,
// `POST /rebalance/deactivate/<hash>` aborts it. The state is kept in the node store
// (`state` key `rebalance`) on every change, so a restart resumes where the node was.
//
// What is done so far: the decision to rebalance (checks, persistence, abort, resume); while
// one is under way new writes also go to the next topology's owners (the node's `started`
// hook, actors/cluster/replication.ts); REHASH sends what this node holds to the owners it
// gains (actors/cluster/relocation.ts) and ends once they confirmed it all. VOTE does not yet
// wait for the other nodes, and nothing follows REHASH_VOTE yet: no node switches topology
// or deletes what it gives up, so a rebalance waits there until deactivated (README "Rebalance").
import type { Logger } from 'pino';
import { ferr } from '../../model/errors.js';
import type { Topology } from '../../model/topology/index.js';
import type { NodeStorage } from '../../storage/node-storage.js';
import type { TopologyLibrary } from './topologies.js';
import type { RelocationFigures } from './relocation.js';

/** After a failed step (a peer or NATS away), the step is tried again this much later. */
const RETRY_MS = 2_000;
/** How often REHASH looks whether the new owners confirmed everything sent. */
const DELIVERY_POLL_MS = 200;

/** IRONdb's states, in the order a node passes through them (back to IDLE when done). */
export const REBALANCE_STATES = [
  'TOPO_REBALANCE_IDLE',
  'TOPO_REBALANCE_VOTE',
  'TOPO_REBALANCE_REHASH',
  'TOPO_REBALANCE_REHASH_VOTE',
  'TOPO_REBALANCE_CLEANUP',
  'TOPO_REBALANCE_COMPLETE',
  'TOPO_REBALANCE_COMPLETE_VOTE',
] as const;
export type RebalanceStateName = (typeof REBALANCE_STATES)[number];

/** What is stored under `state` `rebalance` (docs/format/storage.md). */
interface Stored {
  current: string;
  next: string | null;
  state: RebalanceStateName;
}

/** `GET /rebalance/state`: IRONdb writes "-" when there is no next topology. */
export interface RebalanceReport {
  current: string;
  next: string;
  state: RebalanceStateName;
}

/** What the node does when a rebalance starts (or resumes at boot) and when it ends. */
export interface RebalanceHooks {
  started(next: Topology): Promise<void>;
  stopped(): Promise<void>;
  /** Sends what this node holds to the owners `next` adds; stops early once `aborted()`. */
  relocate(next: Topology, aborted: () => boolean): Promise<RelocationFigures>;
  /** True once the nodes of `next` confirmed everything this node sent them. */
  delivered(next: Topology): boolean;
}

export class Rebalance {
  private stored: Stored;
  private hooks: RebalanceHooks | null = null;
  /** Every write of the state goes through this chain, so the background steps and the endpoints never interleave. */
  private writes: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** What the last REHASH sent (null: none finished since start). */
  relocated: RelocationFigures | null = null;
  /** An activate or deactivate in progress: a second one meanwhile would act on a stale state. */
  private changing: string | null = null;

  private constructor(
    private readonly storage: NodeStorage,
    private readonly topologies: TopologyLibrary,
    private readonly log: Logger,
    stored: Stored | null,
  ) {
    const current = topologies.current.hash;
    // A rebalance recorded under another current topology (the node was started with a
    // different topology file since) no longer applies: it is dropped, not resumed.
    this.stored = stored !== null && stored.current === current && isState(stored.state) ? stored : { current, next: null, state: 'TOPO_REBALANCE_IDLE' };
  }

  static async open(storage: NodeStorage, topologies: TopologyLibrary, log: Logger): Promise<Rebalance> {
    const raw = await storage.rebalanceState();
    let stored: Stored | null = null;
    if (raw !== null) {
      try {
        stored = JSON.parse(raw) as Stored;
      } catch (error) {
        log.warn({ err: error }, 'stored rebalance state is not JSON; starting idle');
      }
    }
    const r = new Rebalance(storage, topologies, log, stored);
    if (r.stored.next !== null) log.info({ next: r.stored.next, state: r.stored.state }, 'resuming rebalance');
    return r;
  }

  /** Installs the node's hooks and, when a rebalance was under way at the last stop, resumes it. */
  async attach(hooks: RebalanceHooks): Promise<void> {
    this.hooks = hooks;
    const next = this.stored.next === null ? undefined : this.topologies.get(this.stored.next);
    if (next === undefined) return;
    await hooks.started(next);
    void this.run(next);
  }

  /** The node stops: background steps end at their next check. */
  close(): void {
    this.closed = true;
  }

  report(): RebalanceReport {
    return { current: this.stored.current, next: this.stored.next ?? '-', state: this.stored.state };
  }

  /** Starts a rebalance to loaded topology `hash`, after checking it is one the cluster can move to. */
  async activate(hash: string): Promise<RebalanceReport> {
    const want = hash.toLowerCase();
    const current = this.topologies.current;
    if (this.changing !== null) throw ferr('FER_ERR_REBALANCE_BUSY', this.changing, 'starting or stopping', this.changing);
    if (this.stored.next !== null) throw ferr('FER_ERR_REBALANCE_BUSY', this.stored.next, this.stored.state, this.stored.next);
    const next = this.topologies.get(want);
    if (next === undefined) throw ferr('FER_ERR_TOPOLOGY_NOT_LOADED', hash, current.hash, hash);
    const refusal = refusalOf(current, next);
    if (refusal !== null) throw ferr('FER_ERR_REBALANCE_REFUSED', want, refusal);
    this.changing = want;
    try {
      // Started before it is recorded, so a failure to start (NATS down) leaves nothing half done.
      await this.hooks?.started(next);
      try {
        await this.save({ current: current.hash, next: want, state: 'TOPO_REBALANCE_VOTE' });
      } catch (error) {
        await this.hooks?.stopped();
        throw error;
      }
    } finally {
      this.changing = null;
    }
    void this.run(next);
    this.log.info({ current: current.hash, next: want }, 'rebalance activated');
    return this.report();
  }

  /** Aborts the rebalance to `hash`: the node stays on its current topology. */
  async deactivate(hash: string): Promise<RebalanceReport> {
    const want = hash.toLowerCase();
    if (this.changing !== null) throw ferr('FER_ERR_REBALANCE_BUSY', this.changing, 'starting or stopping', this.changing);
    if (this.stored.next !== want) {
      const now = this.stored.next === null ? 'no rebalance is under way' : `the rebalance under way is to ${this.stored.next}`;
      throw ferr('FER_ERR_NO_REBALANCE', hash, now);
    }
    this.changing = want;
    try {
      await this.save({ current: this.stored.current, next: null, state: 'TOPO_REBALANCE_IDLE' });
      await this.hooks?.stopped();
    } finally {
      this.changing = null;
    }
    this.log.info({ aborted: want }, 'rebalance deactivated');
    return this.report();
  }

  /**
   * The background steps of the rebalance to `next`, from wherever the stored state says
   * (a restart resumes REHASH from the start: sending twice is harmless). Ends when the
   * rebalance is aborted, the node stops, or there is nothing more it can do yet.
   */
  private async run(next: Topology): Promise<void> {
    const aborted = () => this.closed || this.stored.next !== next.hash;
    const hooks = this.hooks;
    if (hooks === null) return;
    while (!aborted()) {
      try {
        if (this.stored.state === 'TOPO_REBALANCE_VOTE') await this.advance(next.hash, 'TOPO_REBALANCE_REHASH');
        if (this.stored.state !== 'TOPO_REBALANCE_REHASH') return;
        const figures = await hooks.relocate(next, aborted);
        while (!aborted() && !hooks.delivered(next)) await sleep(DELIVERY_POLL_MS);
        if (aborted()) return;
        this.relocated = figures;
        this.log.info({ next: next.hash, ...figures }, 'rebalance: relocation done and confirmed');
        await this.advance(next.hash, 'TOPO_REBALANCE_REHASH_VOTE');
        return;
      } catch (error) {
        this.log.warn({ err: error, next: next.hash, state: this.stored.state }, 'rebalance step failed; trying again');
        await sleep(RETRY_MS);
      }
    }
  }

  /** Moves the rebalance to `hash` on to `state`, unless it was aborted meanwhile. */
  private advance(hash: string, state: RebalanceStateName): Promise<void> {
    return this.serialized(async () => {
      if (this.stored.next !== hash) return;
      await this.write({ ...this.stored, state });
    });
  }

  private save(next: Stored): Promise<void> {
    return this.serialized(() => this.write(next));
  }

  private serialized(step: () => Promise<void>): Promise<void> {
    const done = this.writes.then(step);
    this.writes = done.catch(() => undefined);
    return done;
  }

  private async write(next: Stored): Promise<void> {
    // Written before it is believed: an answer must never report a state a restart would lose.
    await this.storage.storeRebalanceState(JSON.stringify(next));
    this.stored = next;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

function isState(s: unknown): s is RebalanceStateName {
  return (REBALANCE_STATES as readonly unknown[]).includes(s);
}

/**
 * Why moving from `current` to `next` is not allowed (null: it is), after IRONdb's caveats
 * (administration/resizing-clusters): at most W−1 nodes removed per rebalance, since
 * removing W could take every copy of some metric away at once; no change of sidedness,
 * which needs a migration; and not to the topology already current.
 */
export function refusalOf(current: Topology, next: Topology): string | null {
  if (next.hash === current.hash) return 'it is the current topology';
  const kept = new Set(next.nodes.map((n) => n.id));
  const removed = current.nodes.filter((n) => !kept.has(n.id)).map((n) => n.id);
  if (removed.length >= current.writeCopies) {
    return `it removes ${removed.length} node(s) (${removed.join(', ')}) but at most write_copies − 1 = ${current.writeCopies - 1} may be removed in one rebalance`;
  }
  const sided = (t: Topology) => t.nodes.some((n) => n.side !== null);
  if (sided(current) !== sided(next)) return `it ${sided(next) ? 'adds' : 'removes'} sides; changing sidedness needs a migration to a new cluster, not a rebalance`;
  return null;
}
