// The carbon plaintext listener (`carbonPort`): graphite senders stream `name value ts`
// lines over TCP. There is no reply channel, so a bad line is counted and logged (the first
// few per connection, then a summary when it closes), never fatal to the connection. Lines
// are stored in order, one batch per chunk read, durably before the next chunk is read.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { FerriteNode } from '../actors/node/node.js';
import { parseCarbonLine } from '../model/carbon.js';
import { taggedRecords } from '../model/tagged-sample.js';
import { taggedContext, type CheckScope } from './tagged-ingest.js';
import { withinLimits } from './ingest-reply.js';

/** Bad lines logged one by one per connection; the rest are only counted. */
const LOGGED_BAD_LINES = 10;
/** A line longer than this is cut off and rejected (a sender not speaking carbon). */
const MAX_LINE = 64 * 1024;

export interface CarbonCounts {
  accepted: number;
  rejected: number;
}

export class CarbonListener {
  readonly counts: CarbonCounts = { accepted: 0, rejected: 0 };
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(node: FerriteNode, log: Logger, host: string, port: number, scope: CheckScope): Promise<CarbonListener> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const bound = (server.address() as { port: number }).port;
    const listener = new CarbonListener(server, bound);
    server.on('connection', (socket) => listener.serve(socket, node, log, scope));
    return listener;
  }

  private serve(socket: Socket, node: FerriteNode, log: Logger, scope: CheckScope): void {
    this.sockets.add(socket);
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    const mine: CarbonCounts = { accepted: 0, rejected: 0 };
    let lineNo = 0;
    let pending = '';
    let work = Promise.resolve();

    const ingest = async (lines: string[]) => {
      const first = lineNo + 1;
      lineNo += lines.length;
      const items = lines.map((l) => (l.length > MAX_LINE ? `line longer than ${MAX_LINE} bytes` : parseCarbonLine(l)));
      const tagged = taggedRecords(
        items.map((i) => (typeof i === 'string' ? i : [i])),
        taggedContext(node, scope),
        first,
      );
      let records = tagged.records;
      try {
        const limited = await withinLimits(node, tagged);
        records = limited.records;
        for (const e of limited.errors) {
          this.counts.rejected++;
          if (mine.rejected++ < LOGGED_BAD_LINES) log.warn({ peer, line: e.at, reason: e.reason, text: lines[e.at - first]!.slice(0, 200) }, 'carbon: bad line');
        }
        try {
          await node.ingest(records, limited.admission);
        } finally {
          limited.admission?.release();
        }
        mine.accepted += records.length;
        this.counts.accepted += records.length;
      } catch (error) {
        mine.rejected += records.length;
        this.counts.rejected += records.length;
        log.error({ peer, err: error, lines: records.length }, 'carbon: lines not stored');
      }
    };

    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      pending += chunk;
      const cut = pending.lastIndexOf('\n');
      if (cut === -1 && pending.length <= MAX_LINE) return;
      const complete = cut === -1 ? pending : pending.slice(0, cut);
      pending = cut === -1 ? '' : pending.slice(cut + 1);
      const lines = complete.split('\n').filter((l) => l.trim() !== '');
      if (lines.length === 0) return;
      socket.pause(); // back-pressure: read on once this batch is durable
      work = work.then(() => ingest(lines)).finally(() => socket.resume());
    });
    socket.on('end', () => {
      if (pending.trim() !== '') work = work.then(() => ingest([pending]));
      pending = '';
    });
    socket.on('error', (error) => log.debug({ peer, err: error }, 'carbon: connection error'));
    socket.on('close', () => {
      this.sockets.delete(socket);
      void work.then(() => {
        if (mine.rejected > 0) log.warn({ peer, accepted: mine.accepted, rejected: mine.rejected }, 'carbon: connection closed with rejected lines');
      });
    });
  }

  /** Stops accepting and ends open connections. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.end();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
