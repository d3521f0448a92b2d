// A short history of the node's figures for the operations console's live charts: every
// few seconds a snapshot (cumulative counters, replication lag) goes into a ring of the
// last minutes, and rates are computed from consecutive snapshots when asked.
import type { PeerLag } from '../cluster/replication.js';

export interface Snapshot {
  /** Epoch ms. */
  at: number;
  /** Cumulative counters (records ingested, requests, ...): reported as per-second rates. */
  counters: Record<string, number>;
  /** Figures reported as they are (RSS, journal pending). */
  gauges: Record<string, number | null>;
  /** Replication lag per peer (null when standalone). */
  peers: Record<string, PeerLag> | null;
}

export interface History {
  interval_s: number;
  /** Epoch seconds of each point. */
  t: number[];
  /** Per-second rate over the interval ending at each point (null for the first). */
  rates: Record<string, (number | null)[]>;
  gauges: Record<string, (number | null)[]>;
  /** Per peer, each PeerLag field over time. */
  peers: Record<string, Record<keyof PeerLag, (number | null)[]>>;
}

export class NodeHistory {
  private readonly ring: Snapshot[] = [];
  private timer: NodeJS.Timeout | null = null;
  private taking = false;

  constructor(
    private readonly take: () => Promise<Snapshot>,
    private readonly intervalMs: number,
    private readonly capacity: number,
  ) {}

  start(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Takes one snapshot now (a slow one is skipped rather than queued). */
  async sample(): Promise<void> {
    if (this.taking) return;
    this.taking = true;
    try {
      this.ring.push(await this.take());
      if (this.ring.length > this.capacity) this.ring.shift();
    } catch {
      // A figure could not be read (the node is stopping): leave a gap.
    } finally {
      this.taking = false;
    }
  }

  history(): History {
    const snaps = this.ring;
    const rates: History['rates'] = {};
    const gauges: History['gauges'] = {};
    const peers: History['peers'] = {};
    snaps.forEach((s, i) => {
      const prev = snaps[i - 1];
      for (const [name, value] of Object.entries(s.counters)) {
        const dt = prev === undefined ? 0 : (s.at - prev.at) / 1000;
        const before = prev?.counters[name];
        (rates[name] ??= new Array(snaps.length).fill(null))[i] = before === undefined || dt <= 0 ? null : Math.max(0, value - before) / dt;
      }
      for (const [name, value] of Object.entries(s.gauges)) (gauges[name] ??= new Array(snaps.length).fill(null))[i] = value;
      for (const [peer, lag] of Object.entries(s.peers ?? {})) {
        const series = (peers[peer] ??= { unconfirmed_messages: fill(snaps.length), unconfirmed_records: fill(snaps.length), oldest_unconfirmed_age: fill(snaps.length) });
        for (const field of Object.keys(series) as (keyof PeerLag)[]) series[field][i] = lag[field];
      }
    });
    return { interval_s: this.intervalMs / 1000, t: snaps.map((s) => s.at / 1000), rates, gauges, peers };
  }
}

const fill = (n: number): (number | null)[] => new Array(n).fill(null);
