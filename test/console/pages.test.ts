// The operations console in a real browser (headless Chromium) against a real node holding
// numeric, text and histogram data: each page shows what a person would look for.
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { Histogram, histogramToBase64 } from '../../model/histogram/index.js';
import { launchBrowser, newPage, openPage, screenshot, waitForDrawn, waitForNumber } from '../helpers/browser.js';
import { CHECK, getJson, mLine, put, startNode, UUID, type TestNode } from '../helpers/node.js';

const ACCOUNT = 123; // the account of CHECK
const HOSTS = ['alpha', 'beta', 'gamma'];
/** More metrics than one page of the explorer's list holds (25). */
const DISKS = 30;

let n: TestNode;
let browser: Browser;

test.before(async () => {
  n = await startNode({ extensionsDir: 'extensions/examples' });
  const now = Math.floor(Date.now() / 1000);
  const lines: string[] = [];
  for (let t = now - 3600; t < now; t += 30) {
    HOSTS.forEach((host, i) => lines.push(mLine(`${t}.000`, `cpu|ST[host:${host}]`, 'n', String(40 + 20 * Math.sin(t / 600 + i)))));
    if ((now - t) % 900 === 0) lines.push(mLine(`${t}.000`, 'deploy', 's', `release ${(now - t) / 900}`));
  }
  for (let d = 0; d < DISKS; d++) lines.push(mLine(`${now - 60}.000`, `disk.used|ST[disk:d${String(d).padStart(2, '0')}]`, 'L', String(1000 * d)));
  for (let t = now - 3600; t < now; t += 60) {
    const h = Histogram.empty();
    for (let k = 0; k < 40; k++) h.insert(10 + ((k * 7 + t / 60) % 90));
    lines.push(['H1', `${t}.000`, CHECK, 'latency', histogramToBase64(h)].join('\t'));
  }
  const r = await put(n.url, lines.join('\n'));
  if (r.status !== 200 || r.json.errors !== 0) throw new Error(`ingest failed: ${JSON.stringify(r.json)}`);
  browser = await launchBrowser();
});

test.after.always(async () => {
  await browser?.close();
  await n?.stop();
});

async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  return openPage(browser, `${n.url}/${path}`);
}

test('/ serves the console; its script and styles come from the node itself', async (t) => {
  const res = await fetch(`${n.url}/`);
  t.is(res.status, 200);
  const html = await res.text();
  t.regex(html, /<script type="module" src="app.js">/);
  for (const asset of ['app.js', 'app.css']) t.is((await fetch(`${n.url}/${asset}`)).status, 200, asset);
  t.is((await getJson(`${n.url}/no/such/page`)).json.code, 'FER_ERR_NOT_FOUND', 'other paths keep the JSON 404');
});

test('Overview: the node, its ingest rate, disk per column family and backlog; refreshed live', async (t) => {
  const { page, errors } = await open('#/overview');
  const nodes = page.locator('[data-testid=nodes]');
  await nodes.locator('tr', { hasText: n.node.identity }).locator('.pill-self').waitFor();
  const records = async () => Number((await nodes.locator('tbody tr td').nth(7).textContent())!.replace(/,/g, ''));
  // The rate chart: a point every 2 s, so the ingest above shows within a few seconds.
  await waitForNumber(page, '.overview .chart', 'data-max', (v) => v > 0);
  t.true((await waitForDrawn(page, '.overview .chart')) >= 100, 'the rate chart drew its series');
  for (const family of ['journal', 'numeric', 'histogram', 'index']) t.true(await page.locator('table.disk td', { hasText: new RegExp(`^${family}$`) }).isVisible(), family);
  t.regex((await page.getByTestId('disk-by-kind').textContent()) ?? '', /^total .+: raw .+, rollups .+, histograms .+, index .+, journal .+, outbox .+, state /);
  t.regex((await page.locator('table.backlog').textContent())!, /ingest journal entries not yet sealed/);
  // Series per account and the top checks: this node holds the before-hook's 35 series, all of CHECK's account.
  t.regex((await page.getByTestId('series-summary').textContent())!, /^35 series in 1 account · limit per account none, per check none/);
  t.deepEqual(await page.getByTestId('series-accounts').locator('tbody td').allTextContents(), [String(ACCOUNT), '35']);
  t.deepEqual((await page.getByTestId('top-checks').locator('tbody td').allTextContents()).slice(0, 2), [UUID, String(ACCOUNT)]);
  const before = await records();
  t.true(before > 0);
  t.true(await page.locator('.fact', { hasText: `Node.js ${process.version}` }).isVisible(), 'the runtime is shown');
  await put(n.url, mLine(`${Math.floor(Date.now() / 1000)}.000`, 'cpu|ST[host:alpha]', 'n', '1'));
  for (let tries = 0; (await records()) === before && tries < 100; tries++) await page.waitForTimeout(200);
  t.is(await records(), before + 1, 'the page counted the new record without reloading');
  await screenshot(page, 'overview');
  t.deepEqual(errors, []);
});

test('Explorer: the metric list pages through matches, ticked metrics are charted', async (t) => {
  const { page, errors } = await open(`#/explorer?account=${ACCOUNT}&query=${encodeURIComponent('and(__name:disk.used)')}`);
  const list = page.locator('[data-testid=metrics]');
  await list.locator('tbody tr').first().waitFor();
  t.is(await list.locator('tbody tr').count(), 25);
  t.true(await page.getByText('page 1 of 2').isVisible());
  await page.getByRole('button', { name: 'next ›' }).click();
  t.is(await list.locator('tbody tr').count(), DISKS - 25);
  t.true(await list.getByText('disk.used|ST[disk:d29]').isVisible());

  await page.locator('input[name=query]').fill('and(__name:cpu)');
  await page.getByRole('button', { name: 'Search' }).click();
  await list.getByText('cpu|ST[host:gamma]').waitFor();
  t.deepEqual(await list.locator('.metric-name').allTextContents(), HOSTS.map((h) => `cpu|ST[host:${h}]`));
  await page.getByLabel('chart cpu|ST[host:alpha]').check();
  await page.getByLabel('chart cpu|ST[host:beta]').check();
  await waitForNumber(page, '.df4 .chart', 'data-series', (v) => v === 2);
  t.true((await waitForNumber(page, '.df4 .chart', 'data-points', (v) => v > 0)) >= 100, 'an hour of 30 s samples, twice');
  t.true((await waitForDrawn(page, '.df4 .chart')) >= 200, 'two lines drawn');
  t.regex((await page.getByTestId('period').textContent())!, /^period 5 s \(computed from raw samples\)/, 'an hour at the finest period that keeps it under 720 points');
  await page.locator('select[name=range]').selectOption({ label: 'last 24 hours' });
  await page.getByText('period 5 min (a rollup level)').waitFor();
  await screenshot(page, 'explorer');
  t.deepEqual(errors, []);
});

test('Explorer: histograms as a heatmap or percentile bands, text as events', async (t) => {
  const { page, errors } = await open(`#/explorer?account=${ACCOUNT}&query=${encodeURIComponent('or(__name:latency,__name:deploy)')}`);
  await page.getByLabel('chart latency').check();
  await page.getByLabel('chart deploy').check();
  await waitForNumber(page, '.df4 .chart', 'data-cells', (v) => v > 0);
  t.true((await waitForDrawn(page, '.df4 .chart')) >= 500, 'the heatmap painted its bins');
  const events = page.locator('[data-testid=events]');
  await events.getByText('release 1').waitFor();
  t.true(await events.getByText('release 3').isVisible());
  await screenshot(page, 'explorer-histogram');
  await page.locator('select[name=histograms]').selectOption('bands');
  await page.getByText('latency (percentiles)').waitFor();
  const bands = page.locator('.chart', { hasText: 'latency (percentiles)' });
  t.is(await bands.getAttribute('data-series'), '4');
  t.true(Number(await bands.getAttribute('data-max')) > 10, 'percentiles of values 10..100');
  t.deepEqual(errors, []);
});

test('Explorer: the tag query suggests categories, then their values', async (t) => {
  const { page, errors } = await open(`#/explorer?account=${ACCOUNT}`);
  const input = page.locator('input[name=query]');
  await input.fill('');
  await input.pressSequentially('and(ho');
  const suggestions = page.locator('.suggestions li');
  await suggestions.filter({ hasText: 'host:' }).click();
  t.is(await input.inputValue(), 'and(host:');
  await suggestions.filter({ hasText: 'host:beta' }).waitFor();
  t.deepEqual(await suggestions.allTextContents(), HOSTS.map((h) => `host:${h}`));
  await input.press('ArrowDown');
  await input.press('ArrowDown');
  await input.press('Enter');
  t.is(await input.inputValue(), 'and(host:beta');
  t.deepEqual(errors, []);
});

test('CAQL: the result is charted; a bad query shows the message caql_v1 gives', async (t) => {
  const { page, errors } = await open('#/caql');
  await page.locator('input[name=account]').fill(String(ACCOUNT));
  await page.locator('textarea').fill('find("cpu") | label("%tv{host}")');
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForNumber(page, '.caql .chart', 'data-points', (v) => v > 0);
  t.is(await page.locator('.caql .chart').getAttribute('data-series'), '3');
  t.true((await waitForDrawn(page, '.caql .chart')) >= 300);
  t.true(await page.locator('.u-legend').getByText('gamma').isVisible(), 'series labelled by the query');
  await screenshot(page, 'caql');

  const bad = 'find("cpu") | nosuchfunction()';
  const expected = (await getJson(`${n.url}/extension/lua/caql_v1?query=${encodeURIComponent(bad)}&start=0&end=600`)).json.user_error.message as string;
  await page.locator('textarea').fill(bad);
  await page.locator('textarea').press('Control+Enter');
  await page.getByRole('alert').waitFor();
  t.is(await page.getByRole('alert').textContent(), expected);
  t.regex(expected, /nosuchfunction/);
  await screenshot(page, 'caql-error');
  t.deepEqual(errors, []);
});

test('Extensions: each Lua extension is listed with a form that runs it', async (t) => {
  const { page, errors } = await open('#/extensions');
  const ext = page.locator('article[data-name=top_by_mean]');
  await ext.waitFor();
  t.true(await page.locator('article[data-name=caql_v1]').isVisible());
  await page.locator('input[name=account]').fill(String(ACCOUNT));
  await ext.locator('input[name=query]').fill('and(__name:cpu)');
  await ext.locator('input[name=limit]').fill('2');
  await ext.getByRole('button', { name: 'Run top_by_mean' }).click();
  const result = ext.locator('[data-testid=result]');
  await result.waitFor();
  const ranked = JSON.parse((await result.textContent())!) as { metric: string }[];
  t.is(ranked.length, 2);
  t.true(ranked.every((r) => r.metric.startsWith('cpu|ST[host:')));
  await ext.locator('input[name=query]').fill('');
  await ext.getByRole('button', { name: 'Run top_by_mean' }).click();
  await ext.getByRole('alert').waitFor();
  t.regex((await ext.getByRole('alert').textContent())!, /query is required/);
  await screenshot(page, 'extensions');
  t.deepEqual(errors, []);
});

test('Topology: the ring, each node share, and the owners of a metric', async (t) => {
  const { page, errors } = await open('#/topology');
  await page.locator('canvas.ring[data-vnodes="170"]').waitFor();
  t.regex((await page.locator('[data-testid=shares] tbody tr').textContent())!, /100\.0 %/);
  await page.locator('input[name=uuid]').fill(UUID);
  await page.locator('input[name=metric]').fill('cpu|ST[host:alpha]');
  await page.getByRole('button', { name: 'Locate' }).click();
  const owners = page.locator('[data-testid=owners] tbody tr');
  await owners.first().waitFor();
  t.is(await owners.count(), 1);
  t.regex((await owners.textContent())!, new RegExp(`primary${n.node.identity}`));
  await screenshot(page, 'topology');
  await page.locator('input[name=uuid]').fill('not-a-uuid');
  await page.getByRole('button', { name: 'Locate' }).click();
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent())!, /invalid check uuid/);
  t.deepEqual(errors, []);
});

test('Replication on a standalone node says there is nothing to replicate', async (t) => {
  const { page, errors } = await open('#/replication');
  await page.getByText('A standalone node: there is nothing to replicate.').waitFor();
  t.pass();
  t.deepEqual(errors, []);
});

test('API docs: Swagger UI at /api/ lists the endpoints, loading nothing from elsewhere', async (t) => {
  const page = await newPage(browser);
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(n.url) && !r.url().startsWith('data:')) elsewhere.push(r.url());
  });
  await page.goto(`${n.url}/api/`);
  await page.locator('.opblock-summary-path', { hasText: '/fetch' }).first().waitFor();
  for (const path of ['/raw', '/find/{account}/tags', '/extension/lua/caql_v1', '/console/api/overview']) {
    t.true((await page.locator('.opblock-summary-path', { hasText: path }).count()) > 0, path);
  }
  await screenshot(page, 'api-docs', false);
  t.deepEqual(elsewhere, []);
});
