// The NATS connection a clustered node talks over. A standalone node never opens one.
import { connect, type NatsConnection } from '@nats-io/transport-node';

export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

/** Connects, failing fast: a node that cannot reach NATS at start should say so, not hang. */
export async function connectNats(url: string, name: string, timeoutMs: number): Promise<NatsConnection> {
  try {
    return await connect({ servers: url, name, timeout: timeoutMs, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  } catch (error) {
    throw new TransportError(`cannot connect to NATS at ${url}: ${(error as Error).message}`);
  }
}
