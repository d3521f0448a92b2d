// The console shell: navigation by URL hash (`#/<page>?<params>`), one page shown at a
// time, and a refresh loop that keeps the shown page live without reloading.
import 'uplot/dist/uPlot.min.css';
import './console.css';
import { getJson } from './api.js';
import { h, fill } from './dom.js';
import { short, time } from './format.js';
import type { Page, PageFactory } from './page.js';
import { caqlPage } from './pages/caql.js';
import { explorerPage } from './pages/explorer.js';
import { extensionsPage } from './pages/extensions.js';
import { overviewPage } from './pages/overview.js';
import { replicationPage } from './pages/replication.js';
import { topologyPage } from './pages/topology.js';

const PAGES: { id: string; title: string; create: PageFactory }[] = [
  { id: 'overview', title: 'Overview', create: overviewPage },
  { id: 'replication', title: 'Replication', create: replicationPage },
  { id: 'topology', title: 'Topology', create: topologyPage },
  { id: 'explorer', title: 'Explorer', create: explorerPage },
  { id: 'caql', title: 'CAQL', create: caqlPage },
  { id: 'extensions', title: 'Extensions', create: extensionsPage },
];
const DEFAULT_REFRESH_MS = 2_000;

const nav = document.getElementById('nav')!;
const main = document.getElementById('page')!;
const status = document.getElementById('status')!;
let current: { id: string; page: Page } | null = null;
let timer: number | null = null;

function route(): { id: string; params: URLSearchParams } {
  const [path = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?', 2) as [string?, string?];
  const id = PAGES.some((p) => p.id === path) ? path : 'overview';
  return { id, params: new URLSearchParams(query) };
}

function show(): void {
  const { id, params } = route();
  if (current?.id === id) return; // the page changed its own parameters
  current?.page.dispose?.();
  if (timer !== null) clearTimeout(timer);
  const def = PAGES.find((p) => p.id === id)!;
  const setParams = (p: Record<string, string>) => history.replaceState(null, '', `#/${id}?${new URLSearchParams(p).toString()}`);
  const page = def.create({ params, setParams });
  current = { id, page };
  fill(main, page.el);
  document.title = `${def.title} · ferrite`;
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.page === id);
  void tick(page);
}

async function tick(page: Page): Promise<void> {
  if (page.refresh !== undefined) {
    try {
      await page.refresh();
      setStatus('live', `live · ${time(Date.now() / 1000).slice(11)}`);
    } catch (error) {
      setStatus('down', (error as Error).message);
    }
  }
  if (current?.page !== page || page.refresh === undefined) return;
  timer = window.setTimeout(() => void tick(page), page.refreshMs ?? DEFAULT_REFRESH_MS);
}

function setStatus(state: 'live' | 'down', text: string): void {
  status.className = `status-${state}`;
  status.textContent = text;
}

fill(nav, PAGES.map((p) => h('a', { href: `#/${p.id}`, 'data-page': p.id }, p.title)));
window.addEventListener('hashchange', show);
show();
void getJson<{ identity: string; version: string }>('/console/api/overview').then(
  (o) => fill(document.getElementById('node-badge')!, h('span', { title: o.identity }, `node ${short(o.identity)} · v${o.version}`)),
  () => undefined,
);
