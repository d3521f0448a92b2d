// Rebuild, after IRONdb's "Rebuilding Nodes" (administration/rebuilding-nodes.md): a node
// started with an empty (or wiped) data directory and `rebuild` set (`ferrite serve --rebuild`)
// fetches from its peers everything it owns under the current topology, and serves reads only
// once that is done. Here the rebuilding node only asks and waits: every peer walks its own
// metrics (the rebalance's walk, actors/cluster/relocation.ts) and sends the ones the
// rebuilding node owns through its outbox, as ordinary journal messages; check tags follow.
// A peer reports `done` once its walk finished and the rebuilding node confirmed having
// applied everything it sent. When every peer is done the node records that in its store and
// serves: a restart meanwhile resumes the rebuild (the peers walk again: numeric and text
// samples sent twice change nothing, histograms and rollups are sent as sets), a restart
// after it does not rebuild again, whatever the flag says.
//
// Meanwhile the node accepts writes (journaled and replicated as usual) and says in its gossip
// heartbeat that it is rebuilding: peers then neither prefer it for reads nor count on it in
// searches, and its own reads of data it owns go to the other owners (README "Rebuild").
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { NodeStorage } from '../../storage/node-storage.js';
import { noFigures, type RelocationFigures } from './relocation.js';

/** How often the rebuilding node asks its peers where they are. */
const POLL_MS = 500;
/** The log line with progress, at most this often. */
const LOG_EVERY_MS = 5_000;

/** What is stored under `state` `rebuild` (docs/format/storage.md). */
interface Stored {
  /** Names this rebuild: a peer's walk for another one (an earlier wipe) does not count. */
  run: string;
  state: 'running' | 'done';
  /** Epoch ms when the rebuild was first started. */
  started: number;
  finished?: number;
  /** Totals over the peers, when done. */
  figures?: RelocationFigures;
}

/** A peer's walk for a rebuilding node (`rebuild_send` / `rebuild_status` answers). */
export interface RebuildWalkStatus {
  run: string;
  /** none: this peer has no walk for that run (it never got one, or restarted since). */
  state: 'none' | 'running' | 'done';
  figures: RelocationFigures;
  /** Metrics this peer holds, the walk's denominator. */
  total_metrics: number;
  /** Epoch ms when the walk started (0: none). */
  started: number;
  /** Set when the walk failed; it is started again when asked again. */
  error?: string;
}

/** `/state` `rebuild`. */
export interface RebuildReport {
  state: 'running' | 'done';
  run: string;
  started: string;
  elapsed_s: number;
  metrics_received: number;
  records_received: number;
  bytes_received: number;
  check_tag_updates_received: number;
  /** Bytes per second over the elapsed time. */
  rate_bytes_per_s: number;
  rate_metrics_per_s: number;
  /** Share of the peers' metrics walked so far (100 when done). */
  percent: number;
  /** Each peer's walk (null: it did not answer the last time asked). */
  peers: Record<string, RebuildWalkStatus | null>;
}

/** What the rebuilding node needs of the cluster. */
export interface RebuildHooks {
  /** The other nodes of the topology the node runs under. */
  peers(): string[];
  /** Asks `peer` to start its walk for `run` (when it has none) and answers its status. */
  send(peer: string, run: string): Promise<RebuildWalkStatus>;
  status(peer: string, run: string): Promise<RebuildWalkStatus>;
  /** The rebuild is complete and recorded: the node serves from now on. */
  finished(): void;
}

export class Rebuild {
  private hooks: RebuildHooks | null = null;
  private closed = false;
  private readonly walks = new Map<string, RebuildWalkStatus | null>();
  private loggedAt = 0;

  private constructor(
    private readonly storage: NodeStorage,
    private readonly log: Logger,
    private stored: Stored | null,
  ) {}

  /**
   * The rebuild state of this node: resumed when one was under way, started when `requested`
   * and none was ever completed here, else none.
   */
  static async open(storage: NodeStorage, requested: boolean, log: Logger): Promise<Rebuild> {
    const raw = await storage.rebuildState();
    let stored: Stored | null = null;
    if (raw !== null) {
      try {
        stored = JSON.parse(raw) as Stored;
      } catch (error) {
        log.warn({ err: error }, 'stored rebuild state is not JSON; ignoring it');
      }
    }
    const r = new Rebuild(storage, log, stored);
    if (stored?.state === 'running') log.info({ run: stored.run, started: new Date(stored.started).toISOString() }, 'resuming rebuild');
    else if (stored?.state === 'done' && requested) log.info({ run: stored.run, finished: new Date(stored.finished ?? 0).toISOString() }, 'rebuild requested but this data directory was rebuilt already; not rebuilding again');
    else if (stored === null && requested) {
      await r.save({ run: randomUUID(), state: 'running', started: Date.now() });
      log.info({ run: r.stored!.run }, 'rebuild started: fetching from peers everything this node owns');
    }
    return r;
  }

  /** True until the rebuild under way is complete: reads of owned data go to other owners. */
  get active(): boolean {
    return this.stored?.state === 'running';
  }

  /** Starts asking the peers (when a rebuild is under way). */
  attach(hooks: RebuildHooks): void {
    this.hooks = hooks;
    if (this.active) void this.run();
  }

  close(): void {
    this.closed = true;
  }

  report(): RebuildReport | null {
    const s = this.stored;
    if (s === null) return null;
    const walks = [...this.walks.values()].filter((w): w is RebuildWalkStatus => w !== null && w.run === s.run);
    const sum = s.figures ?? walks.reduce((a, w) => addFigures(a, w.figures), noFigures());
    const elapsed = ((s.finished ?? Date.now()) - s.started) / 1000;
    const seen = walks.reduce((a, w) => a + w.figures.metrics_seen, 0);
    const total = walks.reduce((a, w) => a + w.total_metrics, 0);
    const allAsked = this.hooks !== null && this.hooks.peers().every((p) => this.walks.get(p)?.run === s.run);
    const percent = s.state === 'done' ? 100 : total === 0 || !allAsked ? 0 : Math.min(99.9, Math.floor((1000 * seen) / total) / 10);
    return {
      state: s.state,
      run: s.run,
      started: new Date(s.started).toISOString(),
      elapsed_s: round(elapsed),
      metrics_received: sum.metrics_sent,
      records_received: sum.records_sent,
      bytes_received: sum.bytes_sent,
      check_tag_updates_received: sum.check_tag_updates_sent,
      rate_bytes_per_s: elapsed > 0 ? Math.round(sum.bytes_sent / elapsed) : 0,
      rate_metrics_per_s: elapsed > 0 ? round(sum.metrics_sent / elapsed) : 0,
      percent,
      peers: Object.fromEntries((this.hooks?.peers() ?? [...this.walks.keys()]).map((p) => [p, this.walks.get(p) ?? null])),
    };
  }

  /** Asks every peer until each reports its walk for this run done and confirmed. */
  private async run(): Promise<void> {
    const hooks = this.hooks!;
    const run = this.stored!.run;
    while (!this.closed && this.active) {
      const peers = hooks.peers();
      await Promise.all(peers.map(async (peer) => this.walks.set(peer, await this.ask(hooks, peer, run))));
      if (peers.every((p) => this.walks.get(p)?.state === 'done')) {
        await this.finish();
        hooks.finished();
        return;
      }
      if (Date.now() - this.loggedAt >= LOG_EVERY_MS) {
        this.loggedAt = Date.now();
        const r = this.report()!;
        this.log.info({ percent: r.percent, metrics: r.metrics_received, bytes: r.bytes_received, rate_bytes_per_s: r.rate_bytes_per_s, elapsed_s: r.elapsed_s, waiting: peers.filter((p) => this.walks.get(p)?.state !== 'done') }, 'rebuild: progress');
      }
      await sleep(POLL_MS);
    }
  }

  /** A peer's walk for `run`, started when it has none (or it failed); null when it does not answer. */
  private async ask(hooks: RebuildHooks, peer: string, run: string): Promise<RebuildWalkStatus | null> {
    try {
      const status = await hooks.status(peer, run);
      if (status.state !== 'none' && status.error === undefined) return status;
      return await hooks.send(peer, run);
    } catch {
      return null;
    }
  }

  private async finish(): Promise<void> {
    const s = this.stored!;
    const figures = [...this.walks.values()].reduce((a, w) => (w === null ? a : addFigures(a, w.figures)), noFigures());
    await this.save({ ...s, state: 'done', finished: Date.now(), figures });
    const r = this.report()!;
    this.log.info({ run: s.run, elapsed_s: r.elapsed_s, metrics: r.metrics_received, records: r.records_received, bytes: r.bytes_received, rate_bytes_per_s: r.rate_bytes_per_s }, 'rebuild complete: serving');
  }

  private async save(next: Stored): Promise<void> {
    await this.storage.storeRebuildState(JSON.stringify(next));
    this.stored = next;
  }
}

function addFigures(a: RelocationFigures, b: RelocationFigures): RelocationFigures {
  return {
    metrics_seen: a.metrics_seen + b.metrics_seen,
    metrics_sent: a.metrics_sent + b.metrics_sent,
    records_sent: a.records_sent + b.records_sent,
    check_tag_updates_sent: a.check_tag_updates_sent + b.check_tag_updates_sent,
    bytes_sent: a.bytes_sent + b.bytes_sent,
  };
}

const round = (x: number) => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

/**
 * A peer's side: the walks this node runs for rebuilding nodes, one per rebuilding node,
 * answered to `rebuild_send` and `rebuild_status`. Kept in memory only: after a restart of
 * this node the rebuilding node finds none and asks again.
 */
export class RebuildWalks {
  private readonly walks = new Map<string, { status: RebuildWalkStatus; stopped: boolean }>();
  private closed = false;

  constructor(
    /** Sends `target` everything of this node it owns, counting into `figures`; resolves once confirmed. */
    private readonly walk: (target: string, figures: RelocationFigures, aborted: () => boolean) => Promise<void>,
    private readonly totalMetrics: () => Promise<number>,
    private readonly log: Logger,
  ) {}

  status(target: string, run: string): RebuildWalkStatus {
    const w = this.walks.get(target);
    return w !== undefined && w.status.run === run ? w.status : { run, state: 'none', figures: noFigures(), total_metrics: 0, started: 0 };
  }

  /** Starts the walk for `target`'s rebuild `run`, unless one runs or finished for it. */
  async start(target: string, run: string): Promise<RebuildWalkStatus> {
    const have = this.walks.get(target);
    if (have !== undefined && have.status.run === run && have.status.error === undefined) return have.status;
    if (have !== undefined) have.stopped = true;
    // Recorded before anything is awaited, so a second ask meanwhile finds this walk.
    const entry = { status: { run, state: 'running', figures: noFigures(), total_metrics: 0, started: Date.now() } as RebuildWalkStatus, stopped: false };
    this.walks.set(target, entry);
    entry.status.total_metrics = await this.totalMetrics();
    this.log.info({ target, run }, 'rebuild: sending a rebuilding node what it owns');
    const aborted = () => entry.stopped || this.closed;
    void this.walk(target, entry.status.figures, aborted).then(
      () => {
        if (aborted()) return;
        entry.status.state = 'done';
        this.log.info({ target, run, ...entry.status.figures }, 'rebuild: everything sent was confirmed');
      },
      (error: unknown) => {
        entry.status.error = String((error as Error)?.message ?? error);
        this.log.warn({ err: error, target, run }, 'rebuild: the walk failed; it starts again when the rebuilding node asks');
      },
    );
    return entry.status;
  }

  /** `/state` `rebuild_walks`: each rebuilding node's walk here (null when none ran since start). */
  report(): Record<string, RebuildWalkStatus> | null {
    return this.walks.size === 0 ? null : Object.fromEntries([...this.walks].map(([target, w]) => [target, w.status]));
  }

  close(): void {
    this.closed = true;
  }
}
