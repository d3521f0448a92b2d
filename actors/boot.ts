// Start-up (DESIGN.md "Next shape"): open the data directory, join the cluster transport,
// load every store, build the node and wire the cluster's requests to their answerers.
// What a running node does is actors/node/node.ts; how it stops is FerriteNode.stop.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { FerriteConfig } from '../model/config.js';
import { buildRing, type Ring } from '../model/topology/index.js';
import { DataDirError } from '../storage/open-error.js';
import { NodeStorage } from '../storage/node-storage.js';
import { JournalStream, type AppliedReport } from '../transport/journal-stream.js';
import { Rpc } from '../transport/rpc.js';
import { answerStreamRequest } from './coordinators/fetch.js';
import { answerFind } from './coordinators/find.js';
import { FerriteNode } from './node/node.js';
import { ShardSet } from './node/shards.js';
import { answerSamples } from './coordinators/sources/prometheus.js';
import { Replication } from './cluster/replication.js';
import { TopologyLibrary } from './cluster/topologies.js';
import { Rebalance } from './cluster/rebalance.js';
import { Rebuild } from './cluster/rebuild.js';
import { Joining } from './cluster/joining.js';
import { ferr } from '../model/errors.js';
import { natsFor, readTopologyFile, topologyFor } from './cluster/topology-file.js';

/** How long the outbox waits for a peer to say what it applied (at most config peerTimeoutMs). */
const PROBE_TIMEOUT_MS = 2_000;

/** Opens the data directory, replays the journal, joins the cluster and starts the timers. */
export async function startNode(config: FerriteConfig, log: Logger): Promise<FerriteNode> {
  const fromFile = readTopologyFile(config);
  const storage = await NodeStorage.open(config.dataDir, { syncWrites: config.syncWrites });
  const identity = await storage.identity(config.nodeId);
  let ring: Ring;
  let nats: NatsConnection | null = null;
  let replication: Replication | null = null;
  let rpc: Rpc | null = null;
  let topologies: TopologyLibrary;
  let rebalance: Rebalance;
  let rebuild: Rebuild;
  let joining: Joining;
  try {
    const fileTopology = topologyFor(config, fromFile, identity);
    topologies = await TopologyLibrary.open(storage, fileTopology);
    rebalance = await Rebalance.open(storage, topologies, log);
    rebuild = await Rebuild.open(storage, config.rebuild, log);
    joining = await Joining.open(storage, config.join, log);
    // After a rebalance switched (or finished), the node runs under the topology it moved to,
    // though its topology file still names the one it started from.
    // A node the next topology leaves out runs under it too once switched (it owns nothing then).
    ring = buildRing(rebalance.runningTopology());
    nats = await natsFor(config, ring.topology, identity);
    if (nats !== null && ring.topology.nodes.length > 1) {
      replication = await Replication.open(storage.outbox, ring, identity, await JournalStream.open(nats, ring.topology.hash, config.peerTimeoutMs), log);
      rpc = new Rpc(nats, ring.topology.hash, identity);
    }
  } catch (error) {
    await nats?.close();
    await storage.close();
    throw error;
  }
  let node: FerriteNode | null = null;
  let shards: ShardSet;
  try {
    await storage.prepareShards(config.dataDir, { shards: config.shards, partitions: config.partitions }, (what) => log.info(what)).catch((error: unknown) => {
      throw new DataDirError(config.dataDir, error);
    });
    shards = await ShardSet.start(config, identity, ring.topology, config.shards, {
      applied: (records) => node?.onShardApplied(records),
      heap: (shard, share) => node?.admission.heapOf(`shard ${shard}`, share),
      fault: (_shard, partition, error) => node?.onShardFault(partition, error),
      exited: (shard, code) => void node?.onShardExited(shard, code),
    });
  } catch (error) {
    await nats?.close();
    await storage.close();
    throw error;
  }
  node = new FerriteNode({ config, storage, identity, ring, log, nats, replication, rpc, shards, topologies, rebalance, rebuild, joining });
  await node.begin();
  if (rpc !== null) {
    // Kept as a function: a rebalance's switch serves the same requests on the new topology's subjects.
    node.answerRequests((on) =>
      on.serve({
        stream: (p) => servingOnly(node, () => answerStreamRequest(node, p)),
        find: (p) => answerFind(node, p),
        prom_samples: (p) => servingOnly(node, () => answerSamples(node, p)),
        rebuild_send: (p) => node.rebuildWalks.start((p as RebuildAsk).target, (p as RebuildAsk).run),
        rebuild_status: async (p) => node.rebuildWalks.status((p as RebuildAsk).target, (p as RebuildAsk).run),
        applied: async (p) => replication!.appliedReport((p as { incarnation: string }).incarnation),
        rebalance_state: async () => node.rebalance.peerReport(),
        topology_loaded: async (p) => node.hasTopology(p),
      }),
    );
    replication!.setProbe((peer, incarnation) => node.callPeer<AppliedReport>(peer, 'applied', { incarnation }, Math.min(PROBE_TIMEOUT_MS, config.peerTimeoutMs)));
  }
  return node;
}

/** A rebuilding node's `rebuild_send` and `rebuild_status` payload. */
interface RebuildAsk {
  target: string;
  run: string;
}

/** A peer asked a rebuilding node for a metric's data (before it heard of the rebuild): refused, so it asks another owner. */
function servingOnly<T>(node: FerriteNode, answer: () => Promise<T>): Promise<T> {
  if (!node.gossip.serves(node.identity)) return Promise.reject(ferr('FER_ERR_REBUILDING', node.identity));
  return answer();
}
