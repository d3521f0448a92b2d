// Load shedding: past the write budget a node answers 503 with Retry-After at once, stores
// every write it acknowledged, and serves writes again once the burst is over.
import test from 'ava';
import { getJson, mLine, startNode, UUID } from './helpers/node.js';

test('a burst beyond the in-flight budget gets prompt 503s; every 200 is stored', async (t) => {
  const n = await startNode({ maxWriteBytesInFlight: 256 * 1024 });
  try {
    const body = (w: number) => Array.from({ length: 2000 }, (_, i) => mLine(`${1_700_000_000 + w * 2000 + i}.000`, `burst.${w}`, 'n', String(i))).join('\n');
    const replies = await Promise.all(
      Array.from({ length: 32 }, async (_, w) => {
        const res = await fetch(`${n.url}/raw`, { method: 'PUT', body: body(w) });
        return { w, status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as any };
      }),
    );
    const refused = replies.filter((r) => r.status === 503);
    t.true(refused.length > 0, 'the budget holds about two of these bodies, so most of 32 at once are refused');
    for (const r of refused) {
      t.is(r.retryAfter, '1');
      t.is(r.json.code, 'FER_ERR_OVERLOADED');
      t.regex(r.json.error, /in flight; retry after 1 s/);
    }
    for (const r of replies.filter((x) => x.status === 200)) {
      const back = await getJson(`${n.url}/raw/${UUID}/burst.${r.w}?start_ts=0.000&end_ts=2000000000.000`);
      t.is(back.json.length, 2000, `acknowledged writer ${r.w} stored whole`);
    }
    t.true(replies.every((r) => r.status === 200 || r.status === 503));
    // Once the burst is over the node takes writes again, and /state shows what it refused.
    const again = await fetch(`${n.url}/raw`, { method: 'PUT', body: body(99) });
    t.is(again.status, 200);
    const state = (await getJson(`${n.url}/state`)).json;
    t.is(state.admission.refused, refused.length);
    t.is(state.admission.bytes_in_flight, 0);
  } finally {
    await n.stop();
  }
});

test('behind the shards\' backlog, writes wait for room instead of being refused; every one is stored', async (t) => {
  // One record may wait to be applied: each write waits for the ones before it to be applied.
  const n = await startNode({ maxPendingRecords: 1, writeQueueMs: 30_000 });
  try {
    const body = (w: number) => Array.from({ length: 2000 }, (_, i) => mLine(`${1_700_000_000 + i}.000`, `queued.${w}`, 'n', String(i))).join('\n');
    // 20 000 new series: acknowledged once journaled, then applied while the writes below arrive.
    const backlog = Array.from({ length: 20_000 }, (_, i) => mLine('1700000000.000', `backlog.${i}`, 'n', String(i))).join('\n');
    t.is((await fetch(`${n.url}/raw`, { method: 'PUT', body: backlog })).status, 200);
    const statuses = await Promise.all(Array.from({ length: 24 }, async (_, w) => (await fetch(`${n.url}/raw`, { method: 'PUT', body: body(w) })).status));
    t.deepEqual(new Set(statuses), new Set([200]));
    for (let w = 0; w < 24; w++) t.is((await getJson(`${n.url}/raw/${UUID}/queued.${w}?start_ts=0.000&end_ts=2000000000.000`)).json.length, 2000);
    const admission = (await getJson(`${n.url}/state`)).json.admission;
    t.is(admission.refused, 0);
    t.is(admission.writes_queued, 0);
  } finally {
    await n.stop();
  }
});

test('a write whose client gives up while it waits for room holds nothing once the backlog drains', async (t) => {
  const { request } = await import('node:http');
  const n = await startNode({ maxPendingRecords: 1, writeQueueMs: 30_000 });
  try {
    const backlog = Array.from({ length: 20_000 }, (_, i) => mLine('1700000000.000', `gaveup.${i}`, 'n', String(i))).join('\n');
    t.is((await fetch(`${n.url}/raw`, { method: 'PUT', body: backlog })).status, 200);
    // Headers only: the write waits for room before its body is read, and its client leaves.
    const url = new URL(`${n.url}/raw`);
    const req = request({ host: url.hostname, port: url.port, path: '/raw', method: 'PUT', headers: { 'content-length': '100000' } });
    req.on('error', () => {});
    req.flushHeaders();
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    let admission: any;
    for (let i = 0; i < 200; i++) {
      admission = (await getJson(`${n.url}/state`)).json.admission;
      if (admission.records_pending_apply === 0 && admission.writes_queued === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 100));
    admission = (await getJson(`${n.url}/state`)).json.admission;
    t.is(admission.writes_queued, 0);
    t.is(admission.bytes_in_flight, 0, 'the abandoned write holds no bytes in flight');
    t.is((await fetch(`${n.url}/raw`, { method: 'PUT', body: mLine('1700000000.000', 'after', 'n', '1') })).status, 200);
  } finally {
    await n.stop();
  }
});

test('past the write latency budget, writes are refused while others are in flight; /state shows the p99', async (t) => {
  // A budget no write can meet: after the first acknowledged writes, concurrent ones are shed.
  const n = await startNode({ writeLatencyBudgetMs: 1 });
  try {
    const body = (w: number) => Array.from({ length: 3000 }, (_, i) => mLine(`${1_700_000_000 + i}.000`, `budget.${w}`, 'n', String(i))).join('\n');
    for (let w = 0; w < 3; w++) t.is((await fetch(`${n.url}/raw`, { method: 'PUT', body: body(w) })).status, 200, 'one at a time: always admitted');
    const replies = await Promise.all(Array.from({ length: 64 }, async (_, w) => {
      const res = await fetch(`${n.url}/raw`, { method: 'PUT', body: body(10 + w) });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as any };
    }));
    const refused = replies.filter((r) => r.status === 503);
    t.true(refused.length > 0, `${refused.length} of 64 concurrent writes refused`);
    for (const r of refused) {
      t.is(r.retryAfter, '1');
      t.regex(r.json.error, /over the write latency budget of 1 ms/);
    }
    const admission = (await getJson(`${n.url}/state`)).json.admission;
    t.true(admission.write_p99_ms > 1);
    t.is(admission.write_latency_budget_ms, 1);
  } finally {
    await n.stop();
  }
});

test('a refused write is logged as a warning naming the reason, without a stack', async (t) => {
  const { killSpawnedNodes, spawnNode, tempDir } = await import('./helpers/node.js');
  const { writeFileSync } = await import('node:fs');
  const path = await import('node:path');
  t.teardown(killSpawnedNodes);
  const dir = tempDir();
  const config = path.join(dir, 'shed.json');
  writeFileSync(config, JSON.stringify({ maxWriteBytesInFlight: 256 * 1024, writeLatencyBudgetMs: 0 }));
  const n = await spawnNode(path.join(dir, 'data'), ['--config', config]);
  const body = (w: number) => Array.from({ length: 2000 }, (_, i) => mLine(`${1_700_000_000 + w * 2000 + i}.000`, `shed.${w}`, 'n', String(i))).join('\n');
  const statuses = await Promise.all(Array.from({ length: 32 }, async (_, w) => (await fetch(`${n.url}/raw`, { method: 'PUT', body: body(w) })).status));
  t.true(statuses.includes(503));
  await new Promise((r) => setTimeout(r, 200)); // the log lines reach us through a pipe
  const refusals = n.log.map((l) => JSON.parse(l) as { level: number; code?: string; msg: string; err?: unknown }).filter((l) => /in flight; retry after/.test(l.msg));
  t.is(refusals.length, statuses.filter((s) => s === 503).length);
  for (const r of refusals) {
    t.is(r.level, 40, 'warn');
    t.is(r.code, 'FER_ERR_OVERLOADED');
    t.is(r.err, undefined, 'no error object, no stack');
  }
  n.child.kill('SIGTERM');
  await n.exited;
});
