// A node's rebalance to a new topology, in IRONdb's terms (irondb-reference §8.4, IRONdb's
// api/rebalance.md): `POST /rebalance/activate/<hash>` starts one to a topology loaded with
// `POST /topology/<hash>`, `GET /rebalance/state` reports `{current, next, state}`,
// `POST /rebalance/deactivate/<hash>` aborts it. The state is kept in the node store
// (`state` key `rebalance`) on every change, so a restart resumes where the node was.
//
// The steps, each recorded before the next begins:
// - VOTE: new writes already go to both topologies' owners (the `started` hook,
//   actors/cluster/replication.ts). Waits until every node of both topologies has the next
//   topology loaded (they ask each other `topology_loaded`), so none starts copying to owners
//   another node cannot place, and until every node is *ready*: dual-writing, and every message
//   it routed before that confirmed applied by its receivers (`flushed`). Why: a walk copies
//   what its node holds when it reads a metric; a write some node routed to the old owners
//   alone (before its own activation) and that reaches an old owner after that owner's walk
//   read the metric would never reach the new owner. Once every node is ready, every such
//   write is on its old owners before any walk starts, and every later write goes to the new
//   owners directly, so the walks and the dual writes together give the new owners everything;
// - REHASH: this node sends what it holds to the owners it gains (actors/cluster/relocation.ts)
//   and waits until they confirmed it all;
// - REHASH_VOTE: waits until every node of both topologies has relocated, then switches: the
//   node runs under the next topology from here on (routing, replication, reads, search), a
//   node the next topology leaves out too (it then owns nothing and forwards every read).
//   Writes still go to the old owners too, since nodes not yet switched read from them.
//   From then on the rebalance cannot be aborted;
// - CLEANUP: waits until every node has switched (until then some still read under the old
//   topology, from the old owners), then stops writing to the old owners and deletes the
//   metrics this node no longer owns;
// - COMPLETE, COMPLETE_VOTE: waits until every node has cleaned up, then IDLE with the next
//   topology as current.
// Nodes ask each other on the next topology's request subject (`rebalance_state`).
import type { Logger } from 'pino';
import { ferr } from '../../model/errors.js';
import { refusalOf, type Topology } from '../../model/topology/index.js';
import type { NodeStorage } from '../../storage/node-storage.js';
import type { TopologyLibrary } from './topologies.js';
import type { RelocationFigures } from './relocation.js';
import { RebalanceProgress, type RebalanceProgressReport } from './rebalance-progress.js';

/** After a failed step (a peer or NATS away), the step is tried again this much later. */
const RETRY_MS = 2_000;
/** How often REHASH looks whether the new owners confirmed everything sent. */
const DELIVERY_POLL_MS = 200;
/** How often a vote asks the other nodes where they are. */
const VOTE_POLL_MS = 250;

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
  /** True once the node runs under `next` (from the REHASH_VOTE switch on). */
  switched?: boolean;
  /** After a finished rebalance: the topology it started from, the one the node's topology file still names. */
  from?: string;
}

/** `GET /rebalance/state`: IRONdb writes "-" when there is no next topology. */
export interface RebalanceReport {
  current: string;
  next: string;
  state: RebalanceStateName;
}

/** What a node answers its peers' `rebalance_state`: its report, and whether it is ready for the walks (see VOTE above). */
export interface PeerRebalanceReport extends RebalanceReport {
  ready: boolean;
}

/** What the node does when a rebalance starts (or resumes at boot) and when it ends. */
export interface RebalanceHooks {
  /** Dual writes to `next`'s owners begin (at activation, or at start when not yet switched). */
  started(next: Topology): Promise<void>;
  /** At start, a node that had switched in a rebalance still under way: the old topology `old` comes back beside the running one. */
  resumedSwitched(old: Topology, state: RebalanceStateName): Promise<void>;
  stopped(): Promise<void>;
  /** True once everything this node routed before its dual writes began was confirmed by its receivers. */
  flushed(): boolean;
  /** The rebalance is complete (this node is IDLE under the next topology): the old topology is let go. */
  finished(): Promise<void>;
  /** Sends what this node holds to the owners `next` adds, counting into `figures`; stops early once `aborted()`. */
  relocate(next: Topology, aborted: () => boolean, figures: RelocationFigures): Promise<RelocationFigures>;
  /** Metrics this node holds (the walk's denominator). */
  metricCount(): Promise<number>;
  /** True once the nodes of `next` confirmed everything this node sent them. */
  delivered(next: Topology): boolean;
  /** Every other node's `/rebalance/state` and readiness (null: it did not answer). */
  peerStates(next: Topology): Promise<Map<string, PeerRebalanceReport | null>>;
  /** Whether every other node of both topologies has `next` loaded (null: it did not answer). */
  peersLoaded(next: Topology): Promise<Map<string, boolean | null>>;
  /** Runs the node under `next` from now on. */
  switchTo(next: Topology): Promise<void>;
  /** Deletes the metrics this node does not own under `next`; how many. */
  cleanup(next: Topology): Promise<number>;
}

/**
 * Whether a node reporting `r` is at or past `state` of the rebalance to `hash`: in it at that
 * state or later, or already running `hash` with no rebalance under way (a node that joins,
 * started under the new topology, or one that finished).
 */
export function reached(r: RebalanceReport | null, hash: string, state: RebalanceStateName): boolean {
  if (r === null) return false;
  if (r.current === hash && r.next === '-') return true;
  return r.next === hash && REBALANCE_STATES.indexOf(r.state) >= REBALANCE_STATES.indexOf(state);
}

/** Whether a node reporting `r` is ready for the walks of the rebalance to `hash` (see VOTE above): ready, or past VOTE. */
export function readyFor(r: PeerRebalanceReport | null, hash: string): boolean {
  if (r === null) return false;
  return reached(r, hash, 'TOPO_REBALANCE_REHASH') || (reached(r, hash, 'TOPO_REBALANCE_VOTE') && r.ready);
}

export class Rebalance {
  private stored: Stored;
  private hooks: RebalanceHooks | null = null;
  /** Every write of the state goes through this chain, so the background steps and the endpoints never interleave. */
  private writes: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Counts background runs: an abort followed by a new activate to the same hash must end the old one. */
  private runs = 0;
  /** How far the rebalance under way (or the last one) has got. */
  readonly progress = new RebalanceProgress();
  /** An activate or deactivate in progress: a second one meanwhile would act on a stale state. */
  private changing: string | null = null;

  private constructor(
    private readonly storage: NodeStorage,
    private readonly topologies: TopologyLibrary,
    private readonly log: Logger,
    stored: Stored | null,
  ) {
    const file = topologies.current.hash;
    const moved = stored === null ? undefined : topologies.get(stored.current);
    if (stored !== null && stored.current !== file && stored.from === file && moved !== undefined) {
      // After a finished rebalance the node runs under the topology it moved to (and may be in
      // another rebalance from there), though its topology file still names the one it started from.
      topologies.setCurrent(moved);
    }
    const current = topologies.current.hash;
    // A rebalance recorded under another current topology (the node was started with a
    // different topology file since) no longer applies: it is dropped, not resumed.
    const usable = stored !== null && stored.current === current && isState(stored.state) && (stored.next === null || topologies.get(stored.next) !== undefined);
    this.stored = usable ? stored : { current, next: null, state: 'TOPO_REBALANCE_IDLE' };
  }

  /** True while this node is in a rebalance and has switched to its next topology. */
  switchedNow(): boolean {
    return this.stored.switched === true && this.stored.next !== null;
  }

  /** True once this node switched topology in a rebalance (in one, or after one finished). */
  hasSwitched(): boolean {
    return this.stored.switched === true || this.stored.from !== undefined;
  }

  /** The topology the node runs under: the next one once it switched, else the current one. */
  runningTopology(): Topology {
    return this.stored.switched === true && this.stored.next !== null ? this.topologies.get(this.stored.next)! : this.topologies.current;
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
    this.progress.begin();
    // Once switched, the node already runs under `next`; the old topology comes back beside it.
    if (this.stored.switched !== true) await hooks.started(next);
    else await hooks.resumedSwitched(this.topologies.current, this.stored.state);
    void this.run(next);
  }

  /** The node stops: background steps end at their next check. */
  close(): void {
    this.closed = true;
  }

  report(): RebalanceReport {
    return { current: this.stored.current, next: this.stored.next ?? '-', state: this.stored.state };
  }

  /** `/state` `rebalance`. */
  progressReport(): RebalanceProgressReport {
    return this.progress.report(this.report());
  }

  /** The answer to a peer's `rebalance_state`. */
  peerReport(): PeerRebalanceReport {
    return { ...this.report(), ready: this.stored.next !== null && this.hooks?.flushed() === true };
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
        await this.save({ current: current.hash, next: want, state: 'TOPO_REBALANCE_VOTE', ...this.origin() });
      } catch (error) {
        await this.hooks?.stopped();
        throw error;
      }
    } finally {
      this.changing = null;
    }
    this.progress.begin();
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
    if (this.stored.switched === true) throw ferr('FER_ERR_REBALANCE_SWITCHED', want, this.stored.state);
    this.changing = want;
    try {
      await this.save({ current: this.stored.current, next: null, state: 'TOPO_REBALANCE_IDLE', ...this.origin() });
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
    const run = ++this.runs;
    const aborted = () => this.closed || this.stored.next !== next.hash || this.runs !== run;
    const hooks = this.hooks;
    if (hooks === null) return;
    while (!aborted()) {
      try {
        switch (this.stored.state) {
          case 'TOPO_REBALANCE_VOTE':
            if (!(await this.everyNodeLoaded(next, aborted))) return;
            if (!(await this.everyNodeReady(next, aborted))) return;
            await this.advance(next.hash, 'TOPO_REBALANCE_REHASH');
            break;
          case 'TOPO_REBALANCE_REHASH': {
            const figures = await hooks.relocate(next, aborted, this.progress.walking(await hooks.metricCount()));
            if (!aborted()) this.log.info({ next: next.hash, ...figures }, 'rebalance: relocation sent; waiting for the new owners to confirm');
            while (!aborted() && !hooks.delivered(next)) await sleep(DELIVERY_POLL_MS);
            if (aborted()) return;
            this.progress.walked();
            this.log.info({ next: next.hash, ...figures }, 'rebalance: relocation done and confirmed');
            await this.advance(next.hash, 'TOPO_REBALANCE_REHASH_VOTE');
            break;
          }
          case 'TOPO_REBALANCE_REHASH_VOTE':
            if (!(await this.everyNode(next, 'TOPO_REBALANCE_REHASH_VOTE', aborted))) return;
            // Serialized with deactivate: after this an abort is refused.
            await this.serialized(async () => {
              if (this.stored.next !== next.hash) return;
              await hooks.switchTo(next);
              await this.write({ ...this.stored, state: 'TOPO_REBALANCE_CLEANUP', switched: true });
            });
            this.log.info({ next: next.hash }, 'rebalance: every node relocated; running under the next topology');
            break;
          case 'TOPO_REBALANCE_CLEANUP': {
            if (!(await this.everyNode(next, 'TOPO_REBALANCE_CLEANUP', aborted))) return;
            const deleted = await hooks.cleanup(next);
            this.log.info({ next: next.hash, deleted }, 'rebalance: deleted the metrics this node no longer owns');
            await this.advance(next.hash, 'TOPO_REBALANCE_COMPLETE');
            break;
          }
          case 'TOPO_REBALANCE_COMPLETE':
            await this.advance(next.hash, 'TOPO_REBALANCE_COMPLETE_VOTE');
            break;
          case 'TOPO_REBALANCE_COMPLETE_VOTE':
            if (!(await this.everyNode(next, 'TOPO_REBALANCE_COMPLETE_VOTE', aborted))) return;
            await this.serialized(async () => {
              await this.write({ current: next.hash, next: null, state: 'TOPO_REBALANCE_IDLE', from: this.stored.from ?? this.stored.current });
              this.topologies.setCurrent(next);
            });
            this.progress.done();
            this.log.info({ current: next.hash }, 'rebalance complete');
            await hooks.finished();
            return;
          default:
            return;
        }
      } catch (error) {
        this.log.warn({ err: error, next: next.hash, state: this.stored.state }, 'rebalance step failed; trying again');
        await sleep(RETRY_MS);
      }
    }
  }

  /** The topology file's topology, kept while the node runs under one it moved to. */
  private origin(): { from?: string } {
    return this.stored.from === undefined ? {} : { from: this.stored.from };
  }

  /** Waits until every other node has reached `state` (false: aborted or stopping meanwhile). */
  private async everyNode(next: Topology, state: RebalanceStateName, aborted: () => boolean): Promise<boolean> {
    let asked = 0;
    while (!aborted()) {
      const states = await this.askPeers(next);
      const waiting = [...states].filter(([, r]) => !reached(r, next.hash, state)).map(([id]) => id);
      if (waiting.length === 0) return true;
      if (++asked % 50 === 0) this.log.info({ state, waiting }, 'rebalance: waiting for other nodes');
      await sleep(VOTE_POLL_MS);
    }
    return false;
  }

  /** Every other node's state, as progress reports show it (ready as the vote counts it). */
  private async askPeers(next: Topology): Promise<Map<string, PeerRebalanceReport | null>> {
    const states = await this.hooks!.peerStates(next);
    this.progress.heard(new Map([...states].map(([id, r]) => [id, r === null ? null : { ...r, ready: readyFor(r, next.hash) }])));
    return states;
  }

  /** Waits until this node and every other node of both topologies is ready for the walks (false: aborted or stopping meanwhile). */
  private async everyNodeReady(next: Topology, aborted: () => boolean): Promise<boolean> {
    let asked = 0;
    while (!aborted()) {
      const states = await this.askPeers(next);
      const waiting = [...states].filter(([, r]) => !readyFor(r, next.hash)).map(([id]) => id);
      if (!this.hooks!.flushed()) waiting.push('this node (its writes routed before activation are not all confirmed yet)');
      if (waiting.length === 0) return true;
      if (++asked % 20 === 1) this.log.info({ next: next.hash, waiting }, 'rebalance: VOTE waits for these nodes to activate and confirm what they routed before');
      await sleep(VOTE_POLL_MS);
    }
    return false;
  }

  /** Waits until every other node of both topologies has `next` loaded (false: aborted or stopping meanwhile). */
  private async everyNodeLoaded(next: Topology, aborted: () => boolean): Promise<boolean> {
    let asked = 0;
    while (!aborted()) {
      const answers = await this.hooks!.peersLoaded(next);
      const waiting = [...answers].filter(([, loaded]) => loaded !== true).map(([id]) => id);
      if (waiting.length === 0) return true;
      if (++asked % 20 === 1) this.log.info({ next: next.hash, waiting }, 'rebalance: VOTE waits for these nodes to load the next topology');
      await sleep(VOTE_POLL_MS);
    }
    return false;
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
