// A continuous write load and a reader that checks it, for rebalance tests on the real rig:
// the writer sends one numeric sample per metric per batch through the nodes it is given, in
// turn, and records what was acknowledged; the reader keeps reading every metric through the
// nodes it is given and records every acknowledged sample it did not get back (a sample
// acknowledged before the read was sent must be in the answer, value for value), every value
// never written, and every timestamp answered twice. Replication is asynchronous, so a sample
// may reach its other owner a moment after it was acknowledged: when one is missing, the writer
// pauses, the reader waits until every node has had everything it sent applied (no journal
// message unconfirmed anywhere), and reads again; only a sample missing then counts as lost.
import { getJson, mLine, put, UUID } from './node.js';

/** [ts ms, value] as /raw answers them. */
export type Sample = [number, number];

export interface NodeRef {
  id: string;
  url: string;
}

/** Between two write batches. */
const PAUSE_MS = 20;

export class WriteLoad {
  /** name → ts ms → value, for samples whose write was acknowledged. */
  readonly acked = new Map<string, Map<number, number>>();
  /** name → ts ms → value, for every sample sent (acknowledged or not: a failed write may still be stored). */
  readonly sent = new Map<string, Map<number, number>>();
  batches = 0;
  failures = 0;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Set while a reader checks a missing sample: the writer waits (resolved to go on). */
  private paused: { until: Promise<void>; go: () => void } | null = null;
  /** The batch in flight, awaited by `pause`. */
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(
    readonly names: readonly string[],
    /** The first timestamp, seconds; each batch is a minute later. */
    private ts = 600,
  ) {
    for (const n of names) {
      this.acked.set(n, new Map());
      this.sent.set(n, new Map());
    }
  }

  /** Writes batches through `targets()` in turn until stopped. */
  start(targets: () => NodeRef[]): void {
    this.stopped = false;
    this.running = (async () => {
      for (let k = 0; !this.stopped; k++) {
        await this.paused?.until;
        const list = targets();
        this.inFlight = this.writeThrough(list[k % list.length]!);
        await this.inFlight;
        // A steady load, not a flood: the rig's nodes share two cores with the test.
        await new Promise((r) => setTimeout(r, PAUSE_MS));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.resume();
    await this.running;
  }

  /** Holds the writer after the batch in flight; resolves once that one is answered. */
  async pause(): Promise<void> {
    if (this.paused === null) {
      let go = () => {};
      const until = new Promise<void>((r) => (go = r));
      this.paused = { until, go };
    }
    await this.inFlight;
  }

  resume(): void {
    this.paused?.go();
    this.paused = null;
  }

  /** One batch, one sample per metric, through `node`; true when acknowledged. */
  async writeThrough(node: NodeRef): Promise<boolean> {
    const ts = (this.ts += 60);
    const batch = this.batches++;
    const values = this.names.map((_, i) => batch * 1000 + i + 0.5);
    this.names.forEach((n, i) => this.sent.get(n)!.set(ts * 1000, values[i]!));
    const body = this.names.map((n, i) => mLine(`${ts}.000`, n, 'n', String(values[i]))).join('\n');
    const ok = await put(node.url, body).then((r) => r.status === 200, () => false);
    if (!ok) {
      this.failures++;
      return false;
    }
    this.names.forEach((n, i) => this.acked.get(n)!.set(ts * 1000, values[i]!));
    return true;
  }

  /** Every acknowledged sample of `name`, in time order. */
  expected(name: string): Sample[] {
    return [...this.acked.get(name)!].sort((a, b) => a[0] - b[0]);
  }
}

export class ReadChecker {
  readonly problems: string[] = [];
  reads = 0;
  /** Reads that lacked an acknowledged sample at first and got it once replication had caught up. */
  lagged = 0;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly load: WriteLoad,
    /** Resolves once no node holds a journal message its receiver has not applied. */
    private readonly settled: () => Promise<void>,
  ) {}

  /** Reads every metric through each of `sources()` in turn until stopped. */
  start(sources: () => NodeRef[]): void {
    this.stopped = false;
    this.running = (async () => {
      while (!this.stopped) for (const node of sources()) await this.checkAll(node);
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** Reads every metric through `node` once, recording what is wrong. */
  async checkAll(node: NodeRef): Promise<void> {
    for (const name of this.load.names) {
      if (this.stopped) return;
      await this.check(node, name);
    }
  }

  private async check(node: NodeRef, name: string): Promise<void> {
    // Copied before the read is sent: these must all be in the answer.
    const acked = new Map(this.load.acked.get(name)!);
    let missing = await this.missingOf(node, name, acked);
    if (missing !== null && missing.size > 0) {
      // Late or lost: once everything sent is applied everywhere, a late one is there.
      this.lagged++;
      await this.load.pause();
      try {
        await this.settled();
        missing = await this.missingOf(node, name, missing);
      } finally {
        this.load.resume();
      }
    }
    if (missing !== null && missing.size > 0) this.problem(`${name} through ${node.id}: ${missing.size} of ${acked.size} acknowledged samples missing (first at ${[...missing.keys()][0]})`);
  }

  /** Which of `want` a read of `name` through `node` lacks (null: the read failed, recorded). */
  private async missingOf(node: NodeRef, name: string, want: Map<number, number>): Promise<Map<number, number> | null> {
    const read = await getJson(`${node.url}/raw/${UUID}/${encodeURIComponent(name)}?start_ts=0.000&end_ts=1000000000.000`);
    this.reads++;
    if (read.status !== 200 || !Array.isArray(read.json)) {
      this.problem(`${name} through ${node.id}: ${read.status} ${read.text.slice(0, 200)}`);
      return null;
    }
    const got = new Map<number, number>();
    const sent = this.load.sent.get(name)!;
    for (const [ts, value] of read.json as Sample[]) {
      if (got.has(ts)) this.problem(`${name} through ${node.id}: ${ts} answered twice`);
      got.set(ts, value);
      if (sent.get(ts) !== value) this.problem(`${name} through ${node.id}: ${ts} = ${value}, never written`);
    }
    return new Map([...want].filter(([ts, value]) => got.get(ts) !== value));
  }

  private problem(what: string): void {
    if (this.problems.length < 50) this.problems.push(what);
  }
}
