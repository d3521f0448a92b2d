// Reads docker-compose.yml (anchors and `<<` merge keys resolved) and docker/topology.json
// for the tests that check the image and the compose rig agree with each other.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface ComposeService {
  image?: string;
  build?: string | { context?: string };
  command?: string[] | string;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string; interval?: string; timeout?: string; retries?: number; start_period?: string };
  stop_grace_period?: string;
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

export interface TopologyFile {
  write_copies: number;
  nodes: { id: string; address: string; port?: number; apiport?: number }[];
}

export function loadCompose(file = 'docker-compose.yml'): ComposeFile {
  return parse(readFileSync(file, 'utf8'), { merge: true }) as ComposeFile;
}

export function loadTopology(file = 'docker/topology.json'): TopologyFile {
  return JSON.parse(readFileSync(file, 'utf8')) as TopologyFile;
}

/** The services built from this repository's Dockerfile: the ferrite nodes. */
export function ferriteServices(compose: ComposeFile): [string, ComposeService][] {
  return Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
}

/** A compose duration (`90s`, `1m30s`, `500ms`) in milliseconds. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(us|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new Error(`not a compose duration: ${text}`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]!]!, 0);
}

/** `source:target[:mode]` of a short-syntax volume entry. */
export function volumeMount(entry: string): { source: string; target: string; mode: string | null } {
  const [source, target, mode] = entry.split(':');
  if (source === undefined || target === undefined) throw new Error(`not a source:target volume: ${entry}`);
  return { source, target, mode: mode ?? null };
}
