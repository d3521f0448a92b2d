// Replication: for each peer, what this node has journaled to it and not yet seen applied
// (messages, records, age of the oldest), now and over the last minutes; and what waits
// for this node in the cluster journal.
import { getJson } from '../api.js';
import { LineChart } from '../chart.js';
import { card, fill, h, pill, table } from '../dom.js';
import { count, duration, short } from '../format.js';
import type { Page } from '../page.js';
import type { History, Nodes, PeerLag } from '../types.js';

export function replicationPage(): Page {
  const summary = h('div');
  const age = new LineChart();
  const messages = new LineChart();
  const pending = new LineChart();
  const el = h(
    'div',
    { class: 'page replication' },
    card('Peers', summary),
    card('Oldest unconfirmed message per peer (s)', age.el),
    card('Unconfirmed messages per peer', messages.el),
    card('Cluster journal messages pending for this node', pending.el),
  );

  async function refresh(): Promise<void> {
    const [view, history] = await Promise.all([getJson<Nodes>('/console/api/nodes'), getJson<History>('/console/api/history')]);
    const self = view.nodes.find((n) => n.self)!;
    const replication = self.overview?.journal.cluster ?? null;
    if (replication === null) {
      fill(summary, h('p', { class: 'note' }, 'A standalone node: there is nothing to replicate.'));
      return;
    }
    const peers = view.nodes.filter((n) => !n.self);
    fill(
      summary,
      table(
        ['peer', 'state', 'unconfirmed messages', 'unconfirmed records', 'oldest unconfirmed'],
        peers.map((p) => {
          const lag: PeerLag | undefined = replication.peers[p.id];
          return [h('span', { title: p.id }, p.id), p.alive ? pill('up') : pill('down'), count(lag?.unconfirmed_messages), count(lag?.unconfirmed_records), duration(lag?.oldest_unconfirmed_age)];
        }),
        { class: 'peers', 'data-testid': 'peers' },
      ),
      h('p', null, `journal messages pending for this node: ${count(replication.journal_pending)} · misdirected records: ${count(replication.misdirected)}`),
    );
    const ids = peers.map((p) => p.id);
    const perPeer = (field: keyof PeerLag) => ids.map((id) => history.peers[id]?.[field] ?? history.t.map(() => null));
    const labels = ids.map((id) => ({ label: `peer ${short(id)}` }));
    age.show({ title: 'seconds', series: labels }, history.t, perPeer('oldest_unconfirmed_age'));
    messages.show({ title: 'messages', series: labels }, history.t, perPeer('unconfirmed_messages'));
    pending.show({ title: 'messages', series: [{ label: 'pending here' }] }, history.t, [history.gauges.journal_pending ?? history.t.map(() => null)]);
  }

  return { el, refresh, dispose: () => [age, messages, pending].forEach((c) => c.dispose()) };
}
