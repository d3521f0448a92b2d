// A tiny element builder: the console has no framework, only the DOM.
export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, unknown>;

/** Properties set as such (not attributes), so a form control shows the value. */
const PROPERTIES = new Set(['value', 'checked', 'disabled', 'selected', 'textContent']);

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value as EventListener);
    else if (PROPERTIES.has(key)) (el as unknown as Record<string, unknown>)[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'number' ? String(child) : child);
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A titled panel. */
export function card(title: string, ...children: (Child | Child[])[]): HTMLElement {
  return h('section', { class: 'card' }, h('h2', null, title), ...children);
}

/** A table from a header row and body rows. */
export function table(head: string[], rows: Child[][], attrs: Attrs = {}): HTMLTableElement {
  return h(
    'table',
    attrs,
    h('thead', null, h('tr', null, head.map((c) => h('th', null, c)))),
    h('tbody', null, rows.map((r) => h('tr', null, r.map((c) => h('td', null, c))))),
  );
}

/** A coloured state label: up, down, self, ... */
export function pill(state: string, text = state): HTMLElement {
  return h('span', { class: `pill pill-${state}` }, text);
}

/** A message box for a failed request (role=alert, so it is announced and testable). */
export function errorBox(message: string): HTMLElement {
  return h('div', { class: 'error', role: 'alert' }, message);
}
