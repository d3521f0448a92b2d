// The topologies a node knows: the one it runs under, and those loaded with
// `POST /topology/<hash>` (irondb-reference §8.4: a new topology is loaded on every node
// before a rebalance to it starts). Loaded ones are kept in the node store's `state` family
// so a rebalance that names them can resume after a restart.
import { ferr } from '../../model/errors.js';
import { parseTopology, topologyJson, TopologyError, type Topology } from '../../model/topology/index.js';
import type { NodeStorage } from '../../storage/node-storage.js';

const HASH = /^[0-9a-f]{64}$/;

export class TopologyLibrary {
  private readonly known = new Map<string, Topology>();

  private constructor(
    private readonly storage: NodeStorage,
    /** The topology the node's rebalance state calls current (its topology file's, until a rebalance completes). */
    public current: Topology,
  ) {
    this.known.set(current.hash, current);
  }

  static async open(storage: NodeStorage, current: Topology): Promise<TopologyLibrary> {
    const library = new TopologyLibrary(storage, current);
    // Stored JSON is re-parsed, so the hash is recomputed rather than trusted.
    for await (const json of storage.loadedTopologies()) {
      const t = parseTopology(json);
      library.known.set(t.hash, t);
    }
    return library;
  }

  /** A rebalance completed: `t` is current from now on. */
  setCurrent(t: Topology): void {
    this.known.set(t.hash, t);
    this.current = t;
  }

  get(hash: string): Topology | undefined {
    return this.known.get(hash.toLowerCase());
  }

  /**
   * Loads `body` (IRONdb XML or our JSON) as topology `hash`. The body must hash to the
   * path's hash: a mismatch means the caller and this node disagree on the cluster's shape.
   * Loading one already known answers it again (IRONdb answers 200 then too).
   */
  async load(hash: string, body: string): Promise<Topology> {
    const want = hash.toLowerCase();
    if (!HASH.test(want)) throw ferr('FER_ERR_BAD_TOPOLOGY', hash, 'the path must name the topology by its hash, 64 hex digits');
    let topology: Topology;
    try {
      topology = parseTopology(body);
    } catch (error) {
      if (error instanceof TopologyError) throw ferr('FER_ERR_BAD_TOPOLOGY', want, error.message);
      throw error;
    }
    if (topology.hash !== want) throw ferr('FER_ERR_TOPOLOGY_HASH_MISMATCH', want, topology.hash);
    if (!this.known.has(want)) {
      await this.storage.storeTopology(want, JSON.stringify(topologyJson(topology)));
      this.known.set(want, topology);
    }
    return this.known.get(want)!;
  }
}
