// Topology endpoints in IRONdb's shapes (irondb-reference §8.1, §10): `/topology`,
// `/toporing` and `/locate` in JSON and XML, and `/gossip/json`. `POST /topology/<hash>`
// loads a topology for a later rebalance (§8.4); `/topology` and `/toporing` serve loaded
// topologies as well as the current one, `/locate` answers under the current one.
import { XMLBuilder } from 'fast-xml-parser';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { FerriteNode } from '../actors/node/node.js';
import { ferr } from '../model/errors.js';
import { buildRing, ownersOf, topologyJson, type Topology, type TopologyNode } from '../model/topology/index.js';
import { metricFromPath } from './metric-param.js';
import { fields, metricNameParam, str, TAG, uuidParam } from './schemas.js';

type Format = 'json' | 'xml';
// An unknown format is a 404 (no such endpoint), as the handler says, so it is not an enum here.
const format = str('json or xml');
const hashed = fields({ format, hash: str("the topology's hash (64 hex)") }, ['format', 'hash']);
const schema = (summary: string, params?: object) => ({ schema: { tags: [TAG.cluster], summary, ...(params ? { params } : {}) } });
const xml = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', suppressEmptyNode: true });

export async function topologyRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  // Read per request: a rebalance's switch replaces the ring the node runs under.
  const known = (hash: string): Topology => {
    const t = node.topologies.get(hash) ?? (hash.toLowerCase() === node.ring.topology.hash ? node.ring.topology : undefined);
    if (t === undefined) throw ferr('FER_ERR_UNKNOWN_TOPOLOGY', hash, node.ring.topology.hash);
    return t;
  };
  const nodeFields = (topology: Topology) => (n: TopologyNode) => ({
    id: n.id,
    address: n.address,
    port: n.port,
    apiport: n.apiport,
    weight: n.weight,
    n: topology.writeCopies,
    ...(n.side === null ? {} : { side: n.side }),
  });

  app.get('/topology/:format/:hash', schema('The topology: {hash, write_copies, nodes: [{id, address, port, apiport, weight, n, side?}]}', hashed), async (req, reply) => {
    const { format, hash } = params(req.params);
    const t = known(hash);
    const nodes = t.nodes.map(nodeFields(t));
    if (format === 'json') return { hash: t.hash, write_copies: t.writeCopies, nodes };
    return sendXml(reply, { nodes: { '@write_copies': t.writeCopies, node: nodes.map(attributes) } });
  });

  const hashOnly = fields({ hash: str("the topology's hash (64 hex)") }, ['hash']);
  app.get('/topology/:hash', schema('A known topology (current or loaded) as JSON: {hash, write_copies, nodes}', hashOnly), async (req) => {
    const t = known((req.params as { hash: string }).hash);
    return { hash: t.hash, ...topologyJson(t) };
  });

  app.post('/topology/:hash', schema('Loads a topology (IRONdb XML or JSON body) for a later rebalance; the body must hash to <hash>. 200 also when already loaded', hashOnly), async (req) => {
    const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    if (body.trim() === '') throw ferr('FER_ERR_BAD_TOPOLOGY', (req.params as { hash: string }).hash, 'the request body is empty; send the topology as XML or JSON');
    const t = await node.topologies.load((req.params as { hash: string }).hash, body);
    return { hash: t.hash, loaded: true, nodes: t.nodes.length, write_copies: t.writeCopies };
  });

  app.get('/toporing/:format/:hash', schema('The ring: virtual nodes {id, idx, location} in ring order', hashed), async (req, reply) => {
    const { format, hash } = params(req.params);
    const t = known(hash);
    const ring = t.hash === node.ring.topology.hash ? node.ring : buildRing(t);
    const vnodes = ring.vnodes.map((v) => ({ id: v.node.id, idx: v.idx, location: v.location.toString('hex') }));
    if (format === 'json') return { hash: t.hash, vnodes };
    return sendXml(reply, { vnodes: { vnode: vnodes.map(attributes) } });
  });

  const located = fields({ format, uuid: uuidParam, '*': metricNameParam }, ['format', 'uuid', '*']);
  app.get('/locate/:format/:uuid/*', schema("A metric's owners, primary first: {key, location: [nodes]}", located), async (req, reply) => {
    const { format } = params(req.params);
    const { uuid, '*': name } = req.params as { uuid: string; '*': string };
    const metric = metricFromPath(node, uuid, name);
    const owners = ownersOf(node.ring, metric.key);
    if (format === 'json') return { key: metric.key, location: owners.map((n) => ({ id: n.id, address: n.address, port: n.port, apiport: n.apiport, ...(n.side === null ? {} : { side: n.side }) })) };
    // The shape gosnowth's LocateMetricRemote decodes: its Topology type (`<nodes n=…>` of `<node …/>`).
    const nodes = owners.map((n) => ({ id: n.id, address: n.address, port: n.port, apiport: n.apiport, weight: n.weight, ...(n.side === null ? {} : { side: n.side }) }));
    return sendXml(reply, { nodes: { '@n': node.ring.topology.writeCopies, node: nodes.map(attributes) } });
  });

  app.get('/gossip/json', schema('What this node heard from each topology node: [{id, gossip_time, gossip_age, topo_current, ...}] (strings, as IRONdb)'), async () => node.gossip.entries());
}

function params(raw: unknown): { format: Format; hash: string } {
  const { format, hash } = raw as { format: string; hash?: string };
  if (format !== 'json' && format !== 'xml') throw ferr('FER_ERR_NOT_FOUND', 'GET', `/${format}`);
  return { format, hash: hash ?? '' };
}

const attributes = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [`@${k}`, v]));

function sendXml(reply: FastifyReply, doc: unknown): FastifyReply {
  return reply.type('application/xml').send(`<?xml version="1.0" encoding="utf-8"?>\n${xml.build(doc) as string}`);
}
