// docker-compose.yml against docker/topology.json, the Dockerfile's image and the README: no
// Docker engine runs here, so this is what keeps the rig's node ids, topology, environment,
// ports, volumes and start order agreeing with each other.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { imageConfig, parseDockerfile } from './helpers/dockerfile.js';
import { durationMs, ferriteServices, loadCompose, loadTopology, volumeMount, type ComposeService } from './helpers/compose.js';

const compose = loadCompose();
const topology = loadTopology();
const nodes = ferriteServices(compose);
const image = imageConfig(parseDockerfile(readFileSync('Dockerfile', 'utf8')).at(-1)!);
/** A service's environment as its container sees it: the image's, then the service's. */
const envOf = (s: ComposeService): Record<string, string> => ({ ...image.env, ...(s.environment ?? {}) });
const natsName = Object.keys(compose.services).find((name) => compose.services[name]!.image?.startsWith('nats:'));
/**
 * A graceful stop drains requests, seals every open buffer and compacts the journal; with
 * many busy metrics that is seconds, not milliseconds. Compose's default of 10 s is too short
 * to be sure of it, and a node killed mid-seal replays its journal at the next start.
 */
const GRACEFUL_STOP_MS = 30_000;

test('every ferrite service is one node of docker/topology.json, each node exactly once, addressed by its service name', (t) => {
  t.true(nodes.length >= 2, 'a rig of several nodes');
  const ids = nodes.map(([, s]) => envOf(s).FERRITE_NODE_ID);
  t.deepEqual([...ids].sort(), topology.nodes.map((n) => n.id).sort());
  for (const [name, service] of nodes) {
    const node = topology.nodes.find((n) => n.id === envOf(service).FERRITE_NODE_ID)!;
    t.is(node.address, name, `${name}: peers reach a node at its topology address, the service name`);
    t.is(String(node.apiport ?? 8112), envOf(service).FERRITE_PORT, `${name}: the topology's apiport is the port the node listens on`);
  }
});

test('every ferrite service mounts the topology file read-only where FERRITE_TOPOLOGY points', (t) => {
  for (const [name, service] of nodes) {
    const mount = (service.volumes ?? []).map(volumeMount).find((v) => v.target === envOf(service).FERRITE_TOPOLOGY);
    t.is(mount?.source, './docker/topology.json', name);
    t.is(mount?.mode, 'ro', name);
  }
});

test('the nodes reach the nats service, which runs JetStream on a named volume and has a health check', (t) => {
  t.truthy(natsName, 'a nats service');
  const nats = compose.services[natsName!]!;
  const command = Array.isArray(nats.command) ? nats.command : (nats.command ?? '').split(/\s+/);
  t.true(command.includes('-js') || command.includes('--jetstream'), 'JetStream enabled');
  const storeDir = command[command.findIndex((c) => c === '-sd' || c === '--store_dir') + 1];
  t.true((nats.volumes ?? []).map(volumeMount).some((v) => v.target === storeDir && isNamed(v.source)), 'the JetStream store is on a named volume');
  t.truthy(nats.healthcheck?.test, 'nats has a health check');
  for (const [name, service] of nodes) t.is(envOf(service).FERRITE_NATS, `nats://${natsName}:4222`, name);
});

test('the nodes start only once nats is healthy', (t) => {
  for (const [name, service] of nodes) {
    const dependsOn = service.depends_on;
    t.false(Array.isArray(dependsOn), `${name}: depends_on with conditions, not a bare list`);
    t.is((dependsOn as Record<string, { condition?: string }>)[natsName!]?.condition, 'service_healthy', name);
  }
});

test('each node keeps its data on its own named volume, declared at the top level', (t) => {
  const declared = Object.keys(compose.volumes ?? {});
  const dataVolumes = nodes.map(([name, service]) => {
    const mount = (service.volumes ?? []).map(volumeMount).find((v) => v.target === envOf(service).FERRITE_DATA_DIR);
    t.true(mount !== undefined && isNamed(mount.source), `${name}: a named volume at ${envOf(service).FERRITE_DATA_DIR}`);
    return mount?.source;
  });
  t.is(new Set(dataVolumes).size, nodes.length, 'no two nodes share a data volume');
  for (const service of Object.values(compose.services)) {
    for (const v of (service.volumes ?? []).map(volumeMount)) if (isNamed(v.source)) t.true(declared.includes(v.source), `volume ${v.source} declared`);
  }
});

test('host ports are distinct, reach the port each node listens on, and are documented in the README', (t) => {
  const readme = readFileSync('README.md', 'utf8');
  const hostPorts = nodes.map(([name, service]) => {
    t.is(service.ports?.length, 1, name);
    const [host, container] = service.ports![0]!.split(':');
    t.is(container, envOf(service).FERRITE_PORT, `${name}: publishes the port the node listens on`);
    t.true(readme.includes(`localhost:${host}`), `${name}: host port ${host} documented in the README`);
    return host;
  });
  t.is(new Set(hostPorts).size, hostPorts.length);
});

test('compose gives each node time for a graceful stop before it kills it', (t) => {
  for (const [name, service] of nodes) {
    t.truthy(service.stop_grace_period, name);
    t.true(durationMs(service.stop_grace_period!) >= GRACEFUL_STOP_MS, `${name}: stop_grace_period ${service.stop_grace_period}`);
  }
});

function isNamed(source: string): boolean {
  return !source.startsWith('.') && !source.startsWith('/');
}
