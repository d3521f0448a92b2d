// Overview: this node (identity, uptime, memory, disk per column family, backlog, series per
// account and the checks with the most), the live ingest rate, and every topology node's
// state as gossip and its own figures tell.
import { getJson } from '../api.js';
import { LineChart } from '../chart.js';
import { card, fill, h, pill, table } from '../dom.js';
import { bytes, count, duration, percent, short, time } from '../format.js';
import type { Page } from '../page.js';
import type { Cardinality, History, Nodes, NodeView, Overview } from '../types.js';

export function overviewPage(): Page {
  const identity = h('div', { class: 'facts' });
  const rate = new LineChart();
  const nodes = h('div');
  const disk = h('div');
  const backlog = h('div');
  const series = h('div');
  const el = h(
    'div',
    { class: 'page overview' },
    card('Node', identity),
    card('Ingest rate (last 10 minutes)', rate.el),
    card('Nodes', nodes),
    h('div', { class: 'columns' }, card('Disk per column family', disk), card('Memory and backlog', backlog)),
    card('Series (cardinality)', series),
  );

  async function refresh(): Promise<void> {
    const [view, history] = await Promise.all([getJson<Nodes>('/console/api/nodes'), getJson<History>('/console/api/history')]);
    const self = view.nodes.find((n) => n.self)!;
    const o = self.overview!;
    fill(identity, facts(o, view));
    showRate(rate, history);
    fill(nodes, nodeTable(view.nodes));
    fill(disk, diskTable(o));
    fill(backlog, backlogFacts(o));
    fill(series, cardinality(o.cardinality));
  }

  return { el, refresh, dispose: () => rate.dispose() };
}

function facts(o: Overview, view: Nodes): HTMLElement[] {
  const fact = (label: string, value: string, title?: string) => h('div', { class: 'fact' }, h('span', { class: 'label' }, label), h('span', { class: 'value', title }, value));
  return [
    fact('node id', o.identity),
    fact('version', o.version),
    fact('runtime', `Node.js ${o.node_version}`),
    fact('uptime', duration(o.uptime_s), `since ${time(o.started_at)}`),
    fact('topology', short(view.topology.hash), view.topology.hash),
    fact('nodes', `${view.nodes.length} (${view.nodes.filter((n) => n.alive).length} up)`),
    fact('write copies', String(view.topology.write_copies)),
  ];
}

function showRate(chart: LineChart, history: History): void {
  const rates = history.rates;
  const series = (name: string) => rates[name] ?? history.t.map(() => null);
  chart.show(
    {
      title: 'records/s · requests/s · errors/s',
      series: [
        { label: 'records/s', scale: 'records', color: '#2563eb' },
        { label: 'ingest requests/s', scale: 'requests', color: '#9333ea' },
        { label: 'HTTP errors/s', scale: 'requests', color: '#dc2626' },
        { label: 'journal records applied/s', scale: 'records', color: '#16a34a' },
      ],
      axes: [
        { scale: 'records', side: 'left' },
        { scale: 'requests', side: 'right' },
      ],
    },
    history.t,
    [series('records'), series('ingest_requests'), series('http_errors'), series('journal_records_applied')],
  );
}

function nodeState(n: NodeView): HTMLElement {
  if (n.self) return pill('self', 'up (this node)');
  if (!n.alive) return pill('down', n.gossip_age === null ? 'down (never heard)' : `down (silent ${duration(n.gossip_age)})`);
  if (n.error !== undefined) return pill('warn', 'up, figures unavailable');
  return pill('up');
}

function nodeTable(list: NodeView[]): HTMLElement {
  return table(
    ['node', 'address', 'state', 'gossip age', 'uptime', 'RSS', 'disk', 'records ingested', 'applied from peers', 'primary share'],
    list.map((n) => [
      h('span', { title: n.id }, n.id),
      `${n.address}:${n.apiport}`,
      nodeState(n),
      n.self ? '–' : n.gossip_age === null ? 'never' : duration(n.gossip_age),
      duration(n.overview?.uptime_s),
      bytes(n.overview?.memory.rss_bytes),
      bytes(n.overview?.disk.total_bytes),
      count(n.overview?.counters.records),
      count(n.overview?.counters.journal_records_applied),
      n.share === undefined ? '–' : percent(n.share.primary),
    ]),
    { class: 'nodes', 'data-testid': 'nodes' },
  );
}

function diskTable(o: Overview): HTMLElement {
  const families = Object.entries(o.disk.families);
  const max = Math.max(1, ...families.map(([, f]) => f.sst_bytes + f.memtable_bytes));
  return h(
    'div',
    null,
    table(
      ['column family', 'on disk (SST)', 'in memtables', ''],
      families.map(([name, f]) => [
        name,
        bytes(f.sst_bytes),
        bytes(f.memtable_bytes),
        h('div', { class: 'bar', style: `width: ${(100 * (f.sst_bytes + f.memtable_bytes)) / max}%` }),
      ]),
      { class: 'disk' },
    ),
    h('p', { 'data-testid': 'disk-by-kind' }, `total ${bytes(o.disk.total_bytes)}: ${Object.entries(o.disk.by_kind).map(([kind, n]) => `${kind} ${bytes(n)}`).join(', ')}`),
  );
}

/** A count against its limit (0 = none), as "n" or "n of limit (p)". */
function ofLimit(n: number, limit: number): string {
  return limit === 0 ? count(n) : `${count(n)} of ${count(limit)} (${percent(n / limit)})`;
}

function cardinality(c: Cardinality): HTMLElement[] {
  const limit = (n: number) => (n === 0 ? 'none' : count(n));
  const summary = `${count(c.total)} series in ${count(c.accounts)} ${c.accounts === 1 ? 'account' : 'accounts'} · limit per account ${limit(c.limits.max_series_per_account)}, per check ${limit(c.limits.max_series_per_check)} · ${count(c.refused_series)} new series refused since start`;
  const accounts = table(
    ['account', 'series'],
    c.by_account.map((a) => [String(a.account), ofLimit(a.series, c.limits.max_series_per_account)]),
    { class: 'series-accounts', 'data-testid': 'series-accounts' },
  );
  const checks = table(
    ['check uuid', 'account', 'check name', 'series'],
    c.top_checks.map((k) => [k.uuid, String(k.account), k.check_name, ofLimit(k.series, c.limits.max_series_per_check)]),
    { class: 'top-checks', 'data-testid': 'top-checks' },
  );
  return [h('p', { 'data-testid': 'series-summary' }, summary), h('div', { class: 'columns' }, h('div', null, h('h3', null, 'Series per account'), accounts), h('div', null, h('h3', null, 'Top checks by series'), checks))];
}

function backlogFacts(o: Overview): HTMLElement {
  const cluster = o.journal.cluster;
  const b = o.rollup_backlog;
  const atLeast = b.capped ? '≥ ' : '';
  return table(
    ['figure', 'value'],
    [
      ['resident memory (RSS)', bytes(o.memory.rss_bytes)],
      ['JS heap used', bytes(o.memory.heap_used_bytes)],
      ['ingest journal entries not yet sealed', count(o.journal.entries)],
      ['ingest journal size', bytes((o.disk.families.journal?.sst_bytes ?? 0) + (o.disk.families.journal?.memtable_bytes ?? 0))],
      ['raw windows waiting for rollup', atLeast + count(b.numeric_windows)],
      ['histogram periods waiting for rollup', atLeast + count(b.histogram_periods)],
      ['cluster journal messages pending here', cluster === null ? 'standalone' : count(cluster.journal_pending)],
    ],
    { class: 'backlog' },
  );
}
