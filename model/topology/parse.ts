// Reading a topology file: our JSON (`{"write_copies", "nodes": [...]}`), the node array
// IRONdb's /topology/json gives (each node carrying `n`), or IRONdb's XML
// (`<nodes write_copies="W"><node id address port apiport weight side/></nodes>`, older `n=`).
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DEFAULT_PORT, DEFAULT_WEIGHT, makeTopology, TopologyError, type Side, type Topology, type TopologyNode } from './topology.js';

export function parseTopology(text: string): Topology {
  const trimmed = text.trimStart();
  return trimmed.startsWith('<') ? parseXml(trimmed) : parseJson(trimmed);
}

type Fields = Record<string, unknown>;

function parseJson(text: string): Topology {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new TopologyError(`topology is neither XML nor valid JSON: ${(error as Error).message}`);
  }
  if (Array.isArray(doc)) return fromFields(copiesOf(doc[0] as Fields, 'n'), doc);
  if (doc === null || typeof doc !== 'object') throw new TopologyError('a JSON topology is an object {"write_copies", "nodes"} or an array of nodes');
  const o = doc as Fields;
  if (!Array.isArray(o.nodes)) throw new TopologyError('"nodes" must be an array');
  return fromFields(copiesOf(o, 'write_copies'), o.nodes);
}

function parseXml(text: string): Topology {
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new TopologyError(`malformed topology XML at line ${valid.err.line}: ${valid.err.msg}`);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'node', parseAttributeValue: false }).parse(text) as Fields;
  const root = doc.nodes as Fields | undefined;
  if (root === undefined || typeof root !== 'object') throw new TopologyError('topology XML must have a <nodes> root element');
  const copies = root.write_copies !== undefined ? copiesOf(root, 'write_copies') : copiesOf(root, 'n');
  return fromFields(copies, (root.node as unknown[] | undefined) ?? []);
}

function copiesOf(o: Fields | undefined, field: string): number {
  const v = o?.[field];
  if (v === undefined) throw new TopologyError(`the topology does not say ${field} (the number of write copies)`);
  return toInt(v, field);
}

function fromFields(writeCopies: number, nodes: unknown[]): Topology {
  return makeTopology(writeCopies, nodes.map((n, i) => nodeOf(n, i)));
}

function nodeOf(raw: unknown, index: number): TopologyNode {
  if (raw === null || typeof raw !== 'object') throw new TopologyError(`node ${index} is not an object`);
  const o = raw as Fields;
  const where = `node ${index}`;
  if (typeof o.id !== 'string') throw new TopologyError(`${where} has no id`);
  if (typeof o.address !== 'string') throw new TopologyError(`${where} (${o.id}) has no address`);
  const port = o.port === undefined ? DEFAULT_PORT : toInt(o.port, `${where} port`);
  return {
    id: o.id,
    address: o.address,
    port,
    apiport: o.apiport === undefined ? port : toInt(o.apiport, `${where} apiport`),
    weight: o.weight === undefined ? DEFAULT_WEIGHT : toInt(o.weight, `${where} weight`),
    side: sideOf(o.side, where),
  };
}

function sideOf(v: unknown, where: string): Side | null {
  if (v === undefined || v === null || v === '') return null;
  if (v === 'a' || v === 'b') return v;
  throw new TopologyError(`${where}: side must be "a" or "b", got ${JSON.stringify(v)}`);
}

function toInt(v: unknown, what: string): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n)) throw new TopologyError(`${what} must be an integer, got ${JSON.stringify(v)}`);
  return n;
}

/** The JSON form `parseTopology` reads back (`{"write_copies", "nodes"}`), node order kept: it is part of the hash. */
export function topologyJson(t: Pick<Topology, 'writeCopies' | 'nodes'>): { write_copies: number; nodes: object[] } {
  return {
    write_copies: t.writeCopies,
    nodes: t.nodes.map((n) => ({ id: n.id, address: n.address, port: n.port, apiport: n.apiport, weight: n.weight, ...(n.side === null ? {} : { side: n.side }) })),
  };
}
