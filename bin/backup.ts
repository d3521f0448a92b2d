// `ferrite backup <node-url|data-dir> <dest>` and `ferrite restore <backup> <data-dir>`.
import path from 'node:path';
import { backupDataDir, BackupError, restoreBackup, type BackupManifest } from '../storage/backup.js';

/** A running node (its URL) is asked over HTTP; a data directory is read directly (the node must be stopped). */
export async function runBackup(source: string, dest: string): Promise<BackupManifest> {
  const target = path.resolve(dest);
  if (!/^https?:\/\//.test(source)) return backupDataDir(path.resolve(source), target);
  const res = await fetch(`${source.replace(/\/$/, '')}/admin/backup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dest: target }),
  });
  const body = (await res.json()) as BackupManifest & { message?: string; error?: string };
  if (!res.ok) throw new BackupError(`${source} answered ${res.status}: ${body.message ?? body.error ?? JSON.stringify(body)}`);
  return body;
}

export function runRestore(backup: string, dataDir: string): BackupManifest {
  return restoreBackup(path.resolve(backup), path.resolve(dataDir));
}
