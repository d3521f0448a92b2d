// Node-to-node requests over NATS request/reply: each node answers on its own subject.
// Replies are JSON, sent in chunks under NATS's payload limit and ended by an empty
// message, so a large search result or column still fits; a reply that never ends (the
// peer died mid-way) counts as no answer.
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';

/** Well under nats-server's default 1 MiB max_payload. */
const CHUNK_BYTES = 512 * 1024;
const EMPTY = new Uint8Array(0);

export type RpcHandler = (payload: unknown) => Promise<unknown>;

type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

export class RpcError extends Error {
  constructor(
    readonly peer: string,
    message: string,
  ) {
    super(`${peer}: ${message}`);
    this.name = 'RpcError';
  }
}

export class Rpc {
  private sub: Subscription | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly topologyHash: string,
    private readonly identity: string,
  ) {}

  private subject(node: string): string {
    return `ferrite.rpc.${this.topologyHash.slice(0, 16)}.${node}`;
  }

  /** Answers requests `{op, payload}` with the handler of `op`. */
  serve(handlers: Record<string, RpcHandler>): void {
    const sub = this.nc.subscribe(this.subject(this.identity));
    this.sub = sub;
    void (async () => {
      for await (const msg of sub) void this.answer(msg, handlers);
    })();
  }

  private async answer(msg: Msg, handlers: Record<string, RpcHandler>): Promise<void> {
    let outcome: Outcome;
    try {
      const { op, payload } = msg.json<{ op: string; payload: unknown }>();
      const handler = handlers[op];
      if (handler === undefined) throw new Error(`unknown request '${op}'`);
      outcome = { ok: true, value: await handler(payload) };
    } catch (error) {
      outcome = { ok: false, error: (error as Error).message ?? String(error) };
    }
    if (msg.reply === undefined) return;
    const bytes = Buffer.from(JSON.stringify(outcome));
    for (let at = 0; at < bytes.length; at += CHUNK_BYTES) this.nc.publish(msg.reply, bytes.subarray(at, at + CHUNK_BYTES));
    this.nc.publish(msg.reply, EMPTY);
  }

  /** Asks `node`; rejects with an RpcError when it does not answer within `timeoutMs` or fails. */
  async call<T>(node: string, op: string, payload: unknown, timeoutMs: number): Promise<T> {
    const chunks: Uint8Array[] = [];
    let ended = false;
    try {
      const replies = await this.nc.requestMany(this.subject(node), JSON.stringify({ op, payload }), { strategy: 'sentinel', maxWait: timeoutMs });
      for await (const msg of replies) {
        if (msg.data.length === 0) {
          ended = true;
          break;
        }
        chunks.push(msg.data);
      }
    } catch (error) {
      throw new RpcError(node, (error as Error).message);
    }
    if (!ended) throw new RpcError(node, `no complete answer within ${timeoutMs} ms`);
    const outcome = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Outcome;
    if (!outcome.ok) throw new RpcError(node, outcome.error);
    return outcome.value as T;
  }

  stop(): void {
    this.sub?.unsubscribe();
  }
}
