// The Topology page's panel of cluster changes under way on this node (from `/state`): a
// rebalance (its state, what its walk sent and received, the rate, where each peer is) and a
// rebuild (what the peers sent, the rate, each peer's walk), or the walks this node runs for a
// rebuilding peer. Each node reports its own part: open another node's console for its figures.
import { h, pill, table, type Child } from '../dom.js';
import { bytes, count, duration, short } from '../format.js';
import type { ClusterChanges, RebalanceProgress, RebuildProgress, RebuildWalk } from '../types.js';

/** The panel's content for what `/state` says now. */
export function clusterChanges(state: ClusterChanges): Child[] {
  return [rebalancePart(state.rebalance), state.rebuild === undefined ? null : rebuildPart(state.rebuild), state.rebuild_walks === undefined ? null : walksPart(state.rebuild_walks)];
}

function rebalancePart(r: RebalanceProgress | undefined): HTMLElement {
  if (r === undefined || r.started === null) return h('p', { 'data-testid': 'rebalance', 'data-state': 'none' }, 'No rebalance since this node started.');
  const running = r.next !== '-';
  const name = r.state.replace('TOPO_REBALANCE_', '');
  return h(
    'div',
    { 'data-testid': 'rebalance', 'data-state': r.state },
    h('p', null, 'Rebalance ', pill(running ? 'warn' : 'up', name), running ? ` from ${short(r.current)} to ${short(r.next)}` : ` done: running ${short(r.current)}`, ` · ${duration(r.elapsed_s)}`),
    figures('rebalance-figures', [
      ['walked', `${r.percent} % of ${count(r.metrics_total)} metrics`],
      ['metrics sent', count(r.metrics_sent)],
      ['records sent', count(r.records_sent)],
      ['bytes sent', bytes(r.bytes_sent)],
      ['rate', `${count(r.rate_metrics_per_s)} metrics/s · ${bytes(r.rate_bytes_per_s)}/s`],
      ['received (copies and dual writes)', `${count(r.records_received)} records · ${bytes(r.bytes_received)}`],
    ]),
    table(
      ['peer', 'state', 'ready for the walks'],
      Object.entries(r.peers).map(([id, p]) => [h('span', { title: id }, short(id)), p === null ? pill('down', 'no answer') : `${p.state.replace('TOPO_REBALANCE_', '')} (${short(p.current)} → ${p.next === '-' ? '–' : short(p.next)})`, p?.ready ? 'yes' : '–']),
      { 'data-testid': 'rebalance-peers' },
    ),
  );
}

function rebuildPart(r: RebuildProgress): HTMLElement {
  return h(
    'div',
    { 'data-testid': 'rebuild', 'data-state': r.state },
    h('p', null, 'Rebuild ', pill(r.state === 'done' ? 'up' : 'warn', r.state), ` · ${r.percent} % · ${duration(r.elapsed_s)}`),
    figures('rebuild-figures', [
      ['metrics received', count(r.metrics_received)],
      ['records received', count(r.records_received)],
      ['bytes received', bytes(r.bytes_received)],
      ['rate', `${count(r.rate_metrics_per_s)} metrics/s · ${bytes(r.rate_bytes_per_s)}/s`],
    ]),
    walkTable(['peer', 'its walk', 'metrics sent', 'bytes sent'], r.peers, 'rebuild-peers'),
  );
}

function walksPart(walks: Record<string, RebuildWalk>): HTMLElement {
  return h('div', { 'data-testid': 'rebuild-walks' }, h('p', null, 'Sending to rebuilding nodes'), walkTable(['rebuilding node', 'walk', 'metrics sent', 'bytes sent'], walks, 'rebuild-walks-table'));
}

function walkTable(head: string[], walks: Record<string, RebuildWalk | null>, testid: string): HTMLTableElement {
  return table(
    head,
    Object.entries(walks).map(([id, w]) => [h('span', { title: id }, short(id)), w === null ? pill('down', 'no answer') : w.error ?? w.state, w === null ? '–' : count(w.figures.metrics_sent), w === null ? '–' : bytes(w.figures.bytes_sent)]),
    { 'data-testid': testid },
  );
}

/** Label and value rows, no header. */
function figures(testid: string, rows: [string, string][]): HTMLTableElement {
  return h('table', { 'data-testid': testid, class: 'figures' }, h('tbody', null, rows.map(([label, value]) => h('tr', null, h('th', null, label), h('td', null, value)))));
}
