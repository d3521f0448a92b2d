// CAQL: a query editor; the result (DF4) is charted, and a bad query's message is shown
// under the editor, as caql_v1 words it.
import { ApiError, postJson } from '../api.js';
import { Df4View } from '../df4-view.js';
import { card, errorBox, fill, h } from '../dom.js';
import type { Page, PageContext } from '../page.js';
import { gridFor, periodFor, RANGES } from '../period.js';
import type { Df4 } from '../types.js';

const EXAMPLE = 'find("*")';
/** CAQL's native granularity (finer needs #min_period). */
const CAQL_MIN_PERIOD_S = 60;
const CAQL_PERIODS_S = [60, 300, 1800, 10800, 86400];

export function caqlPage(ctx: PageContext): Page {
  const editor = h('textarea', { name: 'query', rows: 6, spellcheck: 'false', value: ctx.params.get('query') ?? EXAMPLE });
  const account = h('input', { type: 'text', name: 'account', value: ctx.params.get('account') ?? '1', size: 6 });
  const range = h('select', { name: 'range' }, RANGES.map((r) => h('option', { value: String(r.seconds), selected: r.seconds === 3600 }, r.label)));
  const messages = h('div', { class: 'messages' });
  const info = h('p', { class: 'note' });
  const view = new Df4View();

  async function run(event?: Event): Promise<void> {
    event?.preventDefault();
    ctx.setParams({ query: editor.value, account: account.value.trim() });
    const rangeS = Number(range.value);
    const period = Math.max(CAQL_MIN_PERIOD_S, periodFor(rangeS, CAQL_PERIODS_S).period);
    const { start, count } = gridFor(rangeS, period);
    const body = { query: editor.value, start, end: start + count * period, period, format: 'DF4', account_id: account.value.trim() };
    fill(messages, h('p', { class: 'note' }, 'running…'));
    try {
      const df4 = await postJson<Df4>('/extension/lua/caql_v1', body);
      const warnings = ([] as string[]).concat(df4.head.warning ?? []);
      fill(messages, warnings.map((w) => h('div', { class: 'warning' }, w)));
      fill(info, `${df4.meta.length} series · period ${df4.head.period} s`);
      view.show(df4, editor.value.split('\n')[0]!.slice(0, 80));
    } catch (error) {
      fill(messages, errorBox(error instanceof ApiError ? error.message : String(error)));
      fill(info);
      fill(view.el);
    }
  }

  editor.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void run(e);
  });
  const el = h(
    'div',
    { class: 'page caql' },
    card(
      'CAQL query',
      h('form', { onsubmit: (e: Event) => void run(e) }, editor, h('div', { class: 'inline' }, h('label', null, 'account ', account), range, h('button', { type: 'submit' }, 'Run'), h('span', { class: 'note' }, 'Ctrl+Enter runs'))),
      messages,
    ),
    card('Result', info, view.el),
  );
  if (ctx.params.has('query')) void run();
  return { el, dispose: () => view.dispose() };
}
