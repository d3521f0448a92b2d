// Topology: the ring drawn as a circle of virtual nodes coloured by node, each node's share
// of the key space, a rebalance or rebuild under way (pages/cluster-changes.ts), and a locate
// box (check uuid + metric name → its owners).
import { ApiError, getJson, seg } from '../api.js';
import { PALETTE } from '../chart.js';
import { card, errorBox, fill, h, pill, table } from '../dom.js';
import { percent, short } from '../format.js';
import type { Page } from '../page.js';
import type { ClusterChanges, Nodes } from '../types.js';
import { clusterChanges } from './cluster-changes.js';

interface Vnode {
  id: string;
  idx: number;
  location: string;
}

interface Located {
  key: string;
  location: { id: string; address: string; apiport: number }[];
}

const RING_SIZE = 280;

export function topologyPage(): Page {
  const ring = h('canvas', { width: RING_SIZE * 2, height: RING_SIZE * 2, class: 'ring', style: `width: ${RING_SIZE}px; height: ${RING_SIZE}px` });
  const shares = h('div');
  const summary = h('p');
  const located = h('div', { class: 'located' });
  const changes = h('div', { class: 'changes' });
  const uuid = h('input', { type: 'text', name: 'uuid', placeholder: 'check uuid', size: 38 });
  const metric = h('input', { type: 'text', name: 'metric', placeholder: 'metric name, e.g. cpu|ST[host:a]', size: 40 });
  let nodes: Nodes | null = null;
  let ringDrawnFor = '';

  async function locate(event: Event): Promise<void> {
    event.preventDefault();
    try {
      const answer = await getJson<Located>(`/locate/json/${seg(uuid.value.trim())}/${seg(metric.value.trim())}`);
      const alive = new Map(nodes?.nodes.map((n) => [n.id, n.alive]) ?? []);
      fill(
        located,
        h('p', null, 'key ', h('code', null, answer.key)),
        table(
          ['copy', 'node', 'address', 'state'],
          answer.location.map((o, i) => [i === 0 ? 'primary' : `copy ${i + 1}`, o.id, `${o.address}:${o.apiport}`, alive.get(o.id) === false ? pill('down') : pill('up')]),
          { 'data-testid': 'owners' },
        ),
      );
    } catch (error) {
      fill(located, errorBox(error instanceof ApiError ? error.message : String(error)));
    }
  }

  const el = h(
    'div',
    { class: 'page topology' },
    card('Ring', summary, h('div', { class: 'ring-row' }, ring, shares)),
    card('Rebalance and rebuild', changes),
    card('Locate a metric', h('form', { class: 'inline', onsubmit: (e: Event) => void locate(e) }, uuid, metric, h('button', { type: 'submit' }, 'Locate')), located),
  );

  async function refresh(): Promise<void> {
    fill(changes, clusterChanges(await getJson<ClusterChanges>('/state')));
    nodes = await getJson<Nodes>('/console/api/nodes');
    const colors = new Map(nodes.nodes.map((n, i) => [n.id, PALETTE[i % PALETTE.length]!]));
    const hash = nodes.topology.hash;
    fill(summary, `topology ${hash} · ${nodes.nodes.length} nodes · ${nodes.topology.write_copies} write copies`);
    fill(
      shares,
      table(
        ['', 'node', 'address', 'weight', 'side', 'primary share', 'holds copies of', 'state'],
        nodes.nodes.map((n) => [
          h('span', { class: 'swatch', style: `background: ${colors.get(n.id)}` }),
          h('span', { title: n.id }, short(n.id)),
          `${n.address}:${n.apiport}`,
          String(n.weight),
          n.side ?? '–',
          n.share ? percent(n.share.primary) : '–',
          n.share ? percent(n.share.copies) : '–',
          n.alive ? pill('up') : pill('down'),
        ]),
        { 'data-testid': 'shares' },
      ),
    );
    if (ringDrawnFor !== hash) {
      const { vnodes } = await getJson<{ vnodes: Vnode[] }>(`/toporing/json/${hash}`);
      drawRing(ring, vnodes, colors);
      ringDrawnFor = hash;
    }
  }

  return { el, refresh, refreshMs: 2_000 };
}

/** Each vnode owns the arc up to its location from the previous one (clockwise from the top). */
function drawRing(canvas: HTMLCanvasElement, vnodes: Vnode[], colors: Map<string, string>): void {
  const ctx = canvas.getContext('2d')!;
  const size = canvas.width;
  const [cx, cy, r] = [size / 2, size / 2, size / 2 - 8];
  const angle = (hex: string) => (parseInt(hex.slice(0, 12), 16) / 2 ** 48) * 2 * Math.PI - Math.PI / 2;
  ctx.clearRect(0, 0, size, size);
  ctx.lineWidth = size * 0.12;
  vnodes.forEach((v, i) => {
    const prev = vnodes[(i - 1 + vnodes.length) % vnodes.length]!;
    let from = angle(prev.location);
    const to = angle(v.location);
    if (vnodes.length === 1 || from >= to) from -= 2 * Math.PI;
    ctx.strokeStyle = colors.get(v.id) ?? '#888';
    ctx.beginPath();
    ctx.arc(cx, cy, r - ctx.lineWidth / 2, from, to);
    ctx.stroke();
  });
  canvas.dataset.vnodes = String(vnodes.length);
}
