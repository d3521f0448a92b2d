// Extensions: every Lua extension the node loaded (and the built-in caql_v1) with its
// parameters as a form; running one shows its JSON answer or its error.
import { ApiError, getJson } from '../api.js';
import { card, errorBox, fill, h } from '../dom.js';
import type { Page } from '../page.js';
import type { ExtensionInfo } from '../types.js';

/** Characters of a result shown (a large answer is cut). */
const MAX_RESULT_CHARS = 20_000;

export function extensionsPage(): Page {
  const list = h('div', { class: 'extensions' });
  const account = h('input', { type: 'text', name: 'account', value: '1', size: 6 });
  const el = h('div', { class: 'page extensions' }, card('Lua extensions', h('label', null, 'account (x-svc-account-id) ', account), list));

  void getJson<Record<string, ExtensionInfo>>('/extension/lua').then(
    (all) => fill(list, Object.entries(all).map(([name, ext]) => extensionForm(name, ext, () => account.value.trim()))),
    (error: Error) => fill(list, errorBox(error.message)),
  );
  return { el };
}

function extensionForm(name: string, ext: ExtensionInfo, account: () => string): HTMLElement {
  const result = h('div', { class: 'result' });
  const inputs = Object.values(ext.params).map((p) => ({ param: p, input: paramInput(p.name, p.type) }));

  async function run(event: Event): Promise<void> {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const { param, input } of inputs) {
      const value = input.type === 'checkbox' ? (input.checked ? 'true' : '') : input.value.trim();
      if (value !== '') query.set(param.name, value);
    }
    fill(result, h('p', { class: 'note' }, 'running…'));
    try {
      const answer = await getJson<unknown>(`/extension/lua/${encodeURIComponent(name)}?${query.toString()}`, /^\d+$/.test(account()) ? { 'x-svc-account-id': account() } : {});
      const text = JSON.stringify(answer, null, 2);
      fill(result, h('pre', { 'data-testid': 'result' }, text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}\n…` : text));
    } catch (error) {
      fill(result, errorBox(error instanceof ApiError ? error.message : String(error)));
    }
  }

  return h(
    'article',
    { class: 'extension', 'data-name': name },
    h('h3', null, name),
    h('p', null, ext.description),
    h(
      'form',
      { class: 'params', onsubmit: (e: Event) => void run(e) },
      inputs.map(({ param, input }) => h('label', null, h('span', null, `${param.name} (${param.type})`), input)),
      h('button', { type: 'submit' }, `Run ${name}`),
    ),
    result,
  );
}

function paramInput(name: string, type: string): HTMLInputElement {
  if (type === 'boolean') return h('input', { type: 'checkbox', name });
  if (type === 'number' || type === 'integer') return h('input', { type: 'number', name, step: type === 'integer' ? '1' : 'any' });
  return h('input', { type: 'text', name, size: 40 });
}
