// The topology this node runs under: the configured file, or a topology of one.
import { readFileSync } from 'node:fs';
import type { FerriteConfig } from '../../model/config.js';
import { parseTopology, standaloneTopology, TopologyError, type Topology } from '../../model/topology/index.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../transport/nats.js';

/** Reads and validates the configured topology file (before the data directory is opened). */
export function readTopologyFile(config: FerriteConfig): Topology | null {
  if (config.topology === null) return null;
  let text: string;
  try {
    text = readFileSync(config.topology, 'utf8');
  } catch (error) {
    throw new TopologyError(`cannot read topology file ${config.topology}: ${(error as Error).message}`);
  }
  try {
    return parseTopology(text);
  } catch (error) {
    if (error instanceof TopologyError) throw new TopologyError(`topology file ${config.topology}: ${error.message}`);
    throw error;
  }
}

/** The node's topology: the file's, which must list this node, or standalone. */
export function topologyFor(config: FerriteConfig, fromFile: Topology | null, identity: string): Topology {
  if (fromFile === null) return standaloneTopology(identity, config.host, config.port);
  if (!fromFile.nodes.some((n) => n.id === identity)) {
    throw new TopologyError(`this node (${identity}) is not in topology ${config.topology}; start it with --node-id set to one of its node ids`);
  }
  return fromFile;
}

/** The NATS connection a topology of several nodes needs (a single node may still use one). */
export async function natsFor(config: FerriteConfig, topology: Topology, identity: string): Promise<NatsConnection | null> {
  if (config.nats === null) {
    if (topology.nodes.length > 1) throw new TopologyError(`a topology of ${topology.nodes.length} nodes needs a NATS server (--nats URL)`);
    return null;
  }
  return connectNats(config.nats, `ferrite ${identity}`, config.peerTimeoutMs);
}
