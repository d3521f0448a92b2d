// The console of one node of a real 3-node cluster (nats-server, three `ferrite serve`
// processes, two copies): every node shown up, the ring shared three ways, replication per
// peer; then a node is killed and the console shows it down and keeps working. Then the
// Topology page's rebalance and rebuild panel: a rebalance to four nodes held at VOTE and run
// to the end, and a node rebuilt from its peers after its data directory was wiped.
import { rmSync } from 'node:fs';
import test from 'ava';
import type { Browser } from 'playwright-core';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { launchBrowser, openPage, screenshot, waitForNumber } from '../helpers/browser.js';
import { getJson, killSpawnedNodes, mLine, put, UUID } from '../helpers/node.js';
import { eventually, growBy, post, stateOf } from '../helpers/rebalance.js';

const ACCOUNT = 123;
const METRICS = 12;

let cluster: TestCluster;
let browser: Browser;

test.before(async () => {
  cluster = await startCluster(3, 2);
  browser = await launchBrowser();
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  killSpawnedNodes();
});

function samples(from: number, to: number, step: number): string {
  const lines: string[] = [];
  for (let t = from; t < to; t += step) for (let m = 0; m < METRICS; m++) lines.push(mLine(`${t}.000`, `req|ST[svc:s${m}]`, 'n', String(m * 10 + (t % 7))));
  return lines.join('\n');
}

test.serial('a node of a 3-node cluster shows every node, the ring and replication; a killed node shows down', async (t) => {
  const [first, , third] = cluster.members;
  const now = Math.floor(Date.now() / 1000);
  t.is((await put(first!.url, samples(now - 600, now, 10))).status, 200);
  await cluster.settled();

  const { page, errors } = await openPage(browser, `${first!.url}/#/overview`);
  const rows = page.locator('[data-testid=nodes] tbody tr');
  await rows.nth(2).waitFor();
  t.is(await rows.count(), 3);
  for (const m of cluster.members) await rows.filter({ hasText: m.id }).locator('.pill-up, .pill-self').waitFor({ timeout: 20_000 });
  t.is(await rows.filter({ hasText: first!.id }).locator('.pill-self').count(), 1);

  await page.goto(`${first!.url}/#/topology`);
  const shares = page.locator('[data-testid=shares] tbody tr');
  await shares.nth(2).waitFor();
  const primary = (await shares.evaluateAll((trs) => trs.map((tr) => Number(tr.children[5]!.textContent!.replace(' %', ''))))) as number[];
  t.true(Math.abs(primary.reduce((a, b) => a + b, 0) - 100) < 0.5, `primary shares ${primary} add up to 100 %`);
  await page.locator('input[name=uuid]').fill(UUID);
  await page.locator('input[name=metric]').fill('req|ST[svc:s1]');
  await page.getByRole('button', { name: 'Locate' }).click();
  await page.locator('[data-testid=owners] tbody tr').nth(1).waitFor();
  t.is(await page.locator('[data-testid=owners] tbody tr').count(), 2, 'two copies');
  await screenshot(page, 'cluster-topology');

  await page.goto(`${first!.url}/#/replication`);
  const peers = page.locator('[data-testid=peers] tbody tr');
  await peers.nth(1).waitFor();
  t.is(await peers.count(), 2);
  t.is(await waitForNumber(page, '.replication .chart', 'data-series', (v) => v === 2), 2, 'one lag line per peer');

  // Kill the third node: gossip stops hearing it, and its share of the writes waits.
  await cluster.kill(2);
  t.is((await put(first!.url, samples(now, now + 60, 10))).status, 200);
  const deadPeer = peers.filter({ hasText: third!.id });
  await deadPeer.locator('.pill-down').waitFor({ timeout: 30_000 });
  const unconfirmed = async () => Number((await deadPeer.locator('td').nth(2).textContent())!.replace(/,/g, ''));
  t.true((await unconfirmed()) > 0, 'journal messages for the dead peer wait unconfirmed');
  await screenshot(page, 'cluster-replication');

  await page.goto(`${first!.url}/#/overview`);
  await rows.filter({ hasText: third!.id }).locator('.pill-down').waitFor();
  t.is(await rows.filter({ hasText: first!.id }).locator('.pill-self').count(), 1);
  await screenshot(page, 'cluster-overview');

  // Search still answers for every metric: the dead node's are answered by their other owner.
  await page.goto(`${first!.url}/#/explorer?account=${ACCOUNT}&query=${encodeURIComponent('and(__name:req)')}`);
  const list = page.locator('[data-testid=metrics] tbody tr');
  await list.nth(METRICS - 1).waitFor({ timeout: 20_000 });
  t.is(await list.count(), METRICS);
  await page.getByLabel('chart req|ST[svc:s1]').check();
  t.true((await waitForNumber(page, '.df4 .chart', 'data-points', (v) => v > 0)) > 0, 'charted while a node is down');
  t.deepEqual(errors, []);
});

test.serial('the Topology page shows a rebalance under way and done, and a rebuild', async (t) => {
  await cluster.start(2);
  const [first, second, third] = cluster.members as [(typeof cluster.members)[0], (typeof cluster.members)[0], (typeof cluster.members)[0]];
  await cluster.settled();
  const grown = await growBy(cluster);
  try {
    const { page, errors } = await openPage(browser, `${first.url}/#/topology`);
    await page.locator('[data-testid=rebalance][data-state=none]').waitFor();
    for (const m of cluster.members) t.is((await post(`${m.url}/topology/${grown.hash}`, grown.json)).status, 200);
    // Activated on two of the three: held at VOTE, the third shown not ready.
    for (const m of [first, second]) t.is((await post(`${m.url}/rebalance/activate/${grown.hash}`)).status, 200);
    await page.locator('[data-testid=rebalance][data-state=TOPO_REBALANCE_VOTE]').waitFor({ timeout: 20_000 });
    const peer = (id: string) => page.locator('[data-testid=rebalance-peers] tbody tr').filter({ hasText: id.slice(0, 8) });
    await peer(third.id).filter({ hasText: 'IDLE' }).waitFor({ timeout: 20_000 });
    await peer(grown.id).filter({ hasText: 'yes' }).waitFor({ timeout: 20_000 });
    t.regex((await page.locator('[data-testid=rebalance] p').first().textContent())!, new RegExp(`VOTE from [0-9a-f]{8} to ${grown.hash.slice(0, 8)}`));
    await screenshot(page, 'cluster-rebalance-vote');

    t.is((await post(`${third.url}/rebalance/activate/${grown.hash}`)).status, 200);
    await eventually('the rebalance to finish', async () => (await Promise.all(cluster.members.map((m) => stateOf(m.url)))).every((s) => s === 'TOPO_REBALANCE_IDLE'), 60_000);
    await page.locator('[data-testid=rebalance][data-state=TOPO_REBALANCE_IDLE]').waitFor({ timeout: 20_000 });
    // Which old owner sends a moved metric depends on where the new node's random id falls on the
    // ring: the first node may send none of the 12, but some node sends some.
    const sent = await Promise.all(cluster.members.map(async (m) => (await getJson(`${m.url}/state`)).json.rebalance as { metrics_sent: number; bytes_sent: number }));
    t.true(sent.some((p) => p.metrics_sent > 0 && p.bytes_sent > 0), 'the old nodes sent metrics to the new one');
    const progress = sent[0]!;
    const figures = page.locator('[data-testid=rebalance-figures]');
    t.regex((await figures.locator('tr').filter({ hasText: 'metrics sent' }).textContent())!, new RegExp(`metrics sent${progress.metrics_sent.toLocaleString('en-US')}`));
    t.regex((await figures.locator('tr').filter({ hasText: 'walked' }).textContent())!, /100 %/);
    await screenshot(page, 'cluster-rebalance-done');

    // The second node loses its data and rebuilds it from its peers (under the topology the
    // cluster now runs: the one its wiped store had moved to).
    await cluster.kill(1);
    rmSync(second.dataDir, { recursive: true, force: true });
    await cluster.start(1, ['--rebuild', '--topology', grown.file]);
    await eventually('the rebuild to finish', async () => (await getJson(`${second.url}/state`)).json.rebuild?.state === 'done', 60_000);
    await page.goto(`${second.url}/#/topology`);
    await page.locator('[data-testid=rebuild][data-state=done]').waitFor({ timeout: 20_000 });
    const rebuild = (await getJson(`${second.url}/state`)).json.rebuild;
    t.true(rebuild.metrics_received > 0);
    t.regex((await page.locator('[data-testid=rebuild-figures] tr').filter({ hasText: 'metrics received' }).textContent())!, new RegExp(rebuild.metrics_received.toLocaleString('en-US')));
    t.is(await page.locator('[data-testid=rebuild-peers] tbody tr').count(), 3, 'each peer\'s walk');
    await screenshot(page, 'cluster-rebuild-done');
    await page.goto(`${first.url}/#/topology`);
    await page.locator('[data-testid=rebuild-walks-table] tbody tr').filter({ hasText: second.id.slice(0, 8) }).waitFor({ timeout: 20_000 });
    t.deepEqual(errors, []);
  } finally {
    grown.node.child.kill('SIGTERM');
    await grown.node.exited;
  }
});
