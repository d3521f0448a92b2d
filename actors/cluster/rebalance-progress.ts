// How far this node's rebalance has got, for `/state` `rebalance`, the console's Topology page
// and `ferrite resize --wait`: what its walk sent (live, as it goes), what it received from its
// peers' journals meanwhile (walk copies and dual writes alike: a receiver cannot tell them
// apart), and where each peer was the last time it was asked. Kept in memory: after a restart
// the walk starts over and so do these figures.
import { noFigures, type RelocationFigures } from './relocation.js';
import type { PeerRebalanceReport, RebalanceReport } from './rebalance.js';

/** `/state` `rebalance`. */
export interface RebalanceProgressReport extends RebalanceReport {
  /** When the rebalance was activated here, or resumed at the last start (ISO 8601); null: none since start. */
  started: string | null;
  /** When it completed here (ISO 8601; null while under way or none). */
  finished: string | null;
  elapsed_s: number;
  /** Metrics this node held when its walk began, the walk's denominator (0 before). */
  metrics_total: number;
  metrics_seen: number;
  metrics_sent: number;
  records_sent: number;
  bytes_sent: number;
  check_tag_updates_sent: number;
  /** Records and journal bytes applied from peers since activation (walk copies and dual writes). */
  records_received: number;
  bytes_received: number;
  /** Over the walk, from its start to its end (or now). */
  rate_metrics_per_s: number;
  rate_bytes_per_s: number;
  /** Share of this node's metrics walked (100 once its walk is done and confirmed). */
  percent: number;
  /** Each other node of both topologies as last asked (null: it did not answer). */
  peers: Record<string, PeerRebalanceReport | null>;
}

export class RebalanceProgress {
  private started: number | null = null;
  private finished: number | null = null;
  private walkStarted: number | null = null;
  private walkDone: number | null = null;
  private total = 0;
  private received = { records: 0, bytes: 0 };
  private peers = new Map<string, PeerRebalanceReport | null>();
  /** Counted into by the walk as it goes. */
  figures: RelocationFigures = noFigures();

  /** A rebalance is activated here, or resumed at start: the figures start from nothing. */
  begin(): void {
    this.started = Date.now();
    this.finished = this.walkStarted = this.walkDone = null;
    this.total = 0;
    this.received = { records: 0, bytes: 0 };
    this.peers = new Map();
    this.figures = noFigures();
  }

  /** The walk (re)starts over `total` metrics; returns the tally it counts into. */
  walking(total: number): RelocationFigures {
    this.walkStarted = Date.now();
    this.walkDone = null;
    this.total = total;
    this.figures = noFigures();
    return this.figures;
  }

  walked(): void {
    this.walkDone = Date.now();
  }

  done(): void {
    this.finished = Date.now();
  }

  /** Journal records applied from a peer while the rebalance is under way. */
  applied(records: number, bytes: number): void {
    this.received.records += records;
    this.received.bytes += bytes;
  }

  /** What the other nodes answered the last time they were asked. */
  heard(peers: Map<string, PeerRebalanceReport | null>): void {
    this.peers = peers;
  }

  report(state: RebalanceReport): RebalanceProgressReport {
    const now = Date.now();
    const f = this.figures;
    const walkSeconds = this.walkStarted === null ? 0 : ((this.walkDone ?? now) - this.walkStarted) / 1000;
    const percent = this.walkDone !== null ? 100 : this.total === 0 ? 0 : Math.min(99.9, Math.floor((1000 * f.metrics_seen) / this.total) / 10);
    return {
      ...state,
      started: iso(this.started),
      finished: iso(this.finished),
      elapsed_s: this.started === null ? 0 : round(((this.finished ?? now) - this.started) / 1000),
      metrics_total: this.total,
      ...f,
      records_received: this.received.records,
      bytes_received: this.received.bytes,
      rate_metrics_per_s: walkSeconds > 0 ? round(f.metrics_sent / walkSeconds) : 0,
      rate_bytes_per_s: walkSeconds > 0 ? Math.round(f.bytes_sent / walkSeconds) : 0,
      percent,
      peers: Object.fromEntries(this.peers),
    };
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const round = (x: number) => Math.round(x * 10) / 10;
