// syncWrites on a real node: every acknowledged write went through an fsync of the WAL, counted
// in /state and, where strace runs, seen in the node's system calls; what was acknowledged reads
// back after a restart.
import test from 'ava';
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { getJson, killSpawnedNodes, mLine, put, spawnNode, startNode, tempDir, UUID } from './helpers/node.js';
import { parseStrace, straceWorks } from './helpers/strace.js';

test.after.always(killSpawnedNodes);

test('with syncWrites every acknowledged write was fsynced; concurrent writes share fsyncs', async (t) => {
  let n = await startNode({ syncWrites: true });
  try {
    const now = Math.floor(Date.now() / 1000) - 60;
    const bodies = Array.from({ length: 12 }, (_, i) => mLine(`${now}.000`, `sync.m${i}`, 'n', String(i)));
    const replies = await Promise.all(bodies.map((b) => put(n.url, b)));
    t.true(replies.every((r) => r.status === 200));
    const figures = (await getJson(`${n.url}/state`)).json.sync_writes as { fsyncs: number; batches: number };
    t.true(figures.batches >= 12, `${figures.batches} batches synced`);
    t.true(figures.fsyncs >= 1 && figures.fsyncs <= figures.batches, `${figures.fsyncs} fsyncs`);
    await n.stop(false);
    n = await startNode({ syncWrites: true }, n.dataDir);
    const rows = await getJson(`${n.url}/raw/${UUID}/sync.m11?start_ts=${now}&end_ts=${now + 1}`);
    t.deepEqual(rows.json, [[now * 1000, 11]], 'acknowledged, read back after a restart');
  } finally {
    await n.stop();
  }
});

test('without syncWrites /state has no sync figures', async (t) => {
  const n = await startNode();
  try {
    t.is((await getJson(`${n.url}/state`)).json.sync_writes, undefined);
  } finally {
    await n.stop();
  }
});

/** The syscalls the strace test follows: the socket's reads and writes, the WAL's writes, fsyncs. */
const TRACED = 'read,readv,recvfrom,write,writev,pwrite64,pwritev,pwritev2,sendto,sendmsg,fsync,fdatasync';

(straceWorks() ? test : test.skip)('under strace: every 200 came after an fdatasync of the WAL file holding its journal entry, begun after the entry was written', async (t) => {
  const dir = tempDir('ferrite-strace-');
  const out = tempDir('ferrite-strace-out-');
  const traceFile = path.join(out, 'trace.txt');
  // The node's own pid: killing strace would leave its tracee running.
  let pid: number | null = null;
  try {
    const node = await spawnNode(dir, ['--sync-writes'], process.execPath, ['strace', '-f', '-yy', '-s', '65536', '-e', `trace=${TRACED}`, '-o', traceFile]);
    const now = Math.floor(Date.now() / 1000) - 60;
    // Each request names its own metric; `.end` keeps one name from being a prefix of another.
    const token = (i: number) => `strace.m${i}.end`;
    const body = (i: number) => Array.from({ length: 5 }, (_, k) => mLine(`${now + k}.000`, token(i), 'n', String(k))).join('\n');
    const REQUESTS = 24;
    for (let round = 0; round < REQUESTS / 8; round++) {
      const replies = await Promise.all(Array.from({ length: 8 }, (_, k) => put(node.url, body(round * 8 + k))));
      t.deepEqual(replies.map((r) => r.status), Array(8).fill(200));
    }
    pid = (JSON.parse(node.log.find((l) => l.includes('ferrite listening'))!) as { pid: number }).pid;
    process.kill(pid, 'SIGTERM');
    await node.exited;
    pid = null;
    const calls = parseStrace(readFileSync(traceFile, 'utf8'));
    const wal = new RegExp(`^${realpathSync(dir).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/\\d+\\.log$`);
    const syncs = calls.filter((c) => (c.name === 'fdatasync' || c.name === 'fsync') && wal.test(c.fd));
    for (let i = 0; i < REQUESTS; i++) {
      const written = calls.find((c) => /^(p?writev?\d*)$/.test(c.name) && wal.test(c.fd) && c.text.includes(token(i)));
      const request = calls.find((c) => /^(readv?|recvfrom)$/.test(c.name) && c.fd.startsWith('TCP') && c.text.includes(token(i)));
      if (written === undefined || request === undefined) {
        t.fail(`request ${i}: ${written === undefined ? 'no WAL write' : 'no socket read'} holds ${token(i)}`);
        continue;
      }
      const answered = calls.find((c) => /^(writev?|sendto|sendmsg)$/.test(c.name) && c.fd === request.fd && c.start > request.end && c.text.includes('HTTP/1.1 200'));
      if (answered === undefined) {
        t.fail(`request ${i}: no 200 written to ${request.fd}`);
        continue;
      }
      const covering = syncs.find((s) => s.fd === written.fd && s.start > written.end && s.end < answered.start);
      t.truthy(covering, `request ${i}: its journal entry (${written.fd}, line ${written.end}) was not fdatasync'ed before its 200 (line ${answered.start})`);
    }
    t.log(`${REQUESTS} acknowledged writes, ${syncs.length} fsyncs of the node's WAL`);
  } finally {
    if (pid !== null) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
});
