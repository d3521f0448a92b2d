// Suggestions for a tag query as it is typed: the word at the cursor is a category (from
// `tag_cats`) or, after `category:`, a value of it (from `tag_vals`); picking one puts it in.
import { getJson } from './api.js';
import { h } from './dom.js';

/** Categories every metric has; `tag_cats` lists only stream-tag categories. */
const SYNTHETIC = ['__name', '__check_uuid', '__type'];
/** Values `tag_vals` does not list. */
const KNOWN_VALUES: Record<string, string[]> = { __type: ['numeric', 'text', 'histogram'] };
const MAX_SUGGESTIONS = 12;
/** Characters that end a word of the query language. */
const DELIMITERS = /[(),\s]/;

export interface Autocomplete {
  el: HTMLElement;
  input: HTMLInputElement;
}

export function tagQueryInput(account: () => string, attrs: Record<string, unknown>): Autocomplete {
  const input = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', ...attrs });
  const list = h('ul', { class: 'suggestions', role: 'listbox', hidden: true });
  let items: string[] = [];
  let active = -1;
  let word = { start: 0, end: 0, text: '' };
  let asked = 0;

  const close = () => {
    list.hidden = true;
    items = [];
    active = -1;
  };
  const pick = (i: number) => {
    const choice = items[i];
    if (choice === undefined) return;
    const value = input.value;
    input.value = value.slice(0, word.start) + choice + value.slice(word.end);
    const caret = word.start + choice.length;
    input.setSelectionRange(caret, caret);
    close();
    input.focus();
    if (choice.endsWith(':')) void suggest(); // a category: go on to its values
  };
  const render = () => {
    list.replaceChildren(...items.map((s, i) => h('li', { role: 'option', class: i === active ? 'active' : '', onmousedown: (e: Event) => (e.preventDefault(), pick(i)) }, s)));
    list.hidden = items.length === 0;
  };

  async function suggest(): Promise<void> {
    const caret = input.selectionStart ?? input.value.length;
    let start = caret;
    while (start > 0 && !DELIMITERS.test(input.value[start - 1]!)) start--;
    let end = caret;
    while (end < input.value.length && !DELIMITERS.test(input.value[end]!)) end++;
    word = { start, end, text: input.value.slice(start, caret) };
    const ticket = ++asked;
    const found = await candidates(account(), word.text).catch(() => []);
    if (ticket !== asked) return; // a later keystroke asked again
    items = found;
    active = -1;
    render();
  }

  input.addEventListener('input', () => void suggest());
  input.addEventListener('focus', () => void suggest());
  input.addEventListener('blur', close);
  input.addEventListener('keydown', (e) => {
    if (list.hidden) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      active = (active + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
      render();
      e.preventDefault();
    } else if ((e.key === 'Enter' || e.key === 'Tab') && active >= 0) {
      pick(active);
      e.preventDefault();
    } else if (e.key === 'Escape') close();
  });
  return { el: h('div', { class: 'autocomplete' }, input, list), input };
}

/** Completions of `word`: `cat` → categories `cat…:`; `cat:val` → `cat:value…`. */
async function candidates(account: string, word: string): Promise<string[]> {
  if (!/^\d+$/.test(account)) return [];
  const all = encodeURIComponent('and(__name:*)');
  const colon = word.indexOf(':');
  if (colon < 0) {
    const cats = await getJson<string[]>(`/find/${account}/tag_cats?query=${all}`);
    return [...SYNTHETIC, ...cats].filter((c) => c.startsWith(word)).slice(0, MAX_SUGGESTIONS).map((c) => `${c}:`);
  }
  const category = word.slice(0, colon);
  const prefix = word.slice(colon + 1);
  const values = KNOWN_VALUES[category] ?? (await getJson<string[]>(`/find/${account}/tag_vals?category=${encodeURIComponent(category)}&query=${all}`));
  return values
    .filter((v) => v.startsWith(prefix))
    .slice(0, MAX_SUGGESTIONS)
    .map((v) => `${category}:${/^[\w.\-/]*$/.test(v) ? v : `"${v.replace(/"/g, '\\"')}"`}`);
}
