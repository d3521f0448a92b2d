// Gossip over NATS: every node publishes a heartbeat (its id, clock and topology) about once
// a second on the topology's subject, and remembers when it last heard from each peer.
// `/gossip/json` reports it in IRONdb's shape (irondb-reference §10): values as strings.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { systemClock, type Clock } from '../model/clock.js';
import type { Topology } from '../model/topology/index.js';

/** Heartbeat interval: 1 s with jitter, like IRONdb's 200–1800 ms. */
const INTERVAL_MS = 1000;
const JITTER_MS = 400;
/** A peer silent this long is presumed down (IRONdb shows gossip ages over 8 s red). */
const ALIVE_MS = 8_000;

interface Heartbeat {
  id: string;
  /** Sender's clock, epoch seconds. */
  time: number;
  topo: string;
  /** The sender is rebuilding from its peers (actors/cluster/rebuild.ts): alive, but its data is incomplete. */
  rebuilding?: true;
}

export interface GossipEntry {
  id: string;
  gossip_time: string;
  gossip_age: string;
  topo_current: string;
  topo_next: string;
  topo_state: string;
  latency: Record<string, string>;
}

export class Gossip {
  private readonly heard = new Map<string, { beat: Heartbeat; at: number }>();
  private timer: NodeJS.Timeout | null = null;
  private sub: Subscription | null = null;
  /** This node is rebuilding: said in every heartbeat, so peers do not read from it. */
  rebuilding = false;

  constructor(
    private readonly nc: NatsConnection | null,
    private readonly identity: string,
    private readonly topology: Topology,
    private readonly clock: Clock = systemClock,
  ) {}

  private get subject(): string {
    return `ferrite.gossip.${this.topology.hash}`;
  }

  start(): void {
    if (this.nc === null) return;
    const sub = this.nc.subscribe(this.subject);
    this.sub = sub;
    void (async () => {
      for await (const msg of sub) {
        try {
          const beat = msg.json<Heartbeat>();
          if (typeof beat.id === 'string' && beat.id !== this.identity) this.heard.set(beat.id, { beat, at: this.clock.now() });
        } catch {
          // Not a heartbeat: ignore it, as gossip is advisory.
        }
      }
    })();
    const beat = () => {
      this.nc!.publish(this.subject, JSON.stringify({ id: this.identity, time: Date.now() / 1000, topo: this.topology.hash, ...(this.rebuilding ? { rebuilding: true } : {}) }));
      this.timer = setTimeout(beat, INTERVAL_MS - JITTER_MS / 2 + Math.random() * JITTER_MS);
      this.timer.unref();
    };
    beat();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.sub?.unsubscribe();
  }

  /** True for this node and for peers heard from within the last few heartbeats. */
  isAlive(id: string): boolean {
    if (id === this.identity) return true;
    const h = this.heard.get(id);
    return h !== undefined && this.clock.now() - h.at < ALIVE_MS;
  }

  /** True when `id` is alive and not rebuilding: its data can be read. */
  serves(id: string): boolean {
    if (id === this.identity) return !this.rebuilding;
    return this.isAlive(id) && this.heard.get(id)?.beat.rebuilding !== true;
  }

  /** One entry per topology node; a peer never heard from has time "0" and age "-1". */
  entries(): GossipEntry[] {
    const now = this.clock.now();
    return this.topology.nodes.map((n) => {
      if (n.id === this.identity) return entry(n.id, now / 1000, 0, this.topology.hash);
      const h = this.heard.get(n.id);
      if (h === undefined) return { ...entry(n.id, 0, 0, '-'), gossip_age: '-1', topo_state: 'unknown' };
      return entry(n.id, h.beat.time, (now - h.at) / 1000, h.beat.topo);
    });
  }
}

function entry(id: string, time: number, ageSecs: number, topo: string): GossipEntry {
  return { id, gossip_time: time.toFixed(3), gossip_age: ageSecs.toFixed(3), topo_current: topo, topo_next: '-', topo_state: 'n/a', latency: {} };
}
