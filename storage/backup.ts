// Backups of a data directory: the node's store at the root and each shard's store under
// `shards/<n>`, each copied from a RocksDB snapshot into a new store, plus BACKUP.json saying
// what was copied. A backup is itself a data directory: restoring it is a copy.
//
// Consistency across the stores of a running node: the shards are copied first, then the
// node's store, and the node does not cut its journal while a backup runs. A sample sealed
// into a shard after that shard's snapshot is still in the journal the node's later snapshot
// holds, and replaying it at start is idempotent; so everything acknowledged before the
// backup began is in the copy, exactly once.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { recordedLayout, shardDir } from './shard-layout.js';
import { Store } from './rocks.js';

export const MANIFEST = 'BACKUP.json';

export interface BackupManifest {
  format: 1;
  created_at: string;
  /** Stores copied: the node's and one per shard. */
  shards: number;
  bytes: number;
  seconds: number;
}

export class BackupError extends Error {}

/** Refuses a destination that holds anything: a backup never mixes with other files. */
export function prepareDestination(dest: string): void {
  if (!path.isAbsolute(dest)) throw new BackupError(`backup destination '${dest}' must be an absolute path`);
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new BackupError(`backup destination '${dest}' exists and is not empty`);
  mkdirSync(path.join(dest, 'shards'), { recursive: true });
}

export function writeManifest(dest: string, m: Omit<BackupManifest, 'format' | 'created_at'>, startedAt: number): BackupManifest {
  const manifest: BackupManifest = { format: 1, created_at: new Date(startedAt).toISOString(), ...m };
  writeFileSync(path.join(dest, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Backs up the data directory of a node that is not running. */
export async function backupDataDir(dataDir: string, dest: string): Promise<BackupManifest> {
  const started = Date.now();
  prepareDestination(dest);
  const node = await Store.open(dataDir);
  let bytes = 0;
  let shards = 0;
  try {
    const layout = await recordedLayout(node);
    shards = layout?.shards ?? 0;
    for (let n = 0; n < shards; n++) {
      const shard = await Store.open(shardDir(dataDir, n));
      try {
        bytes += await shard.copySnapshotTo(shardDir(dest, n));
      } finally {
        await shard.close();
      }
    }
    bytes += await node.copySnapshotTo(dest);
  } finally {
    await node.close();
  }
  return writeManifest(dest, { shards, bytes, seconds: (Date.now() - started) / 1000 }, started);
}

/** Restores a backup into an empty (or new) data directory. */
export function restoreBackup(backup: string, dataDir: string): BackupManifest {
  const manifestPath = path.join(backup, MANIFEST);
  if (!existsSync(manifestPath)) throw new BackupError(`'${backup}' is not a ferrite backup: it has no ${MANIFEST}`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as BackupManifest;
  if (manifest.format !== 1) throw new BackupError(`'${backup}' is a backup of format ${String(manifest.format)}, which this release cannot restore`);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) throw new BackupError(`data directory '${dataDir}' exists and is not empty: restore into a new one`);
  cpSync(backup, dataDir, { recursive: true, filter: (src) => path.basename(src) !== MANIFEST && path.basename(src) !== 'LOCK' });
  return manifest;
}
