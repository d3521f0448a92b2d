// Label format strings (reference "Labels"), used by label(), label:name(), vector:pack(),
// tag:synth() and stats:ratio(): `%d` the stream's index, `%n` the metric name, `%cn` the
// canonical name, `%t{cat}` → `cat:val`, `%tv{cat}` → `val`; `{*}` is every tag not starting
// with `__`, a list `{a,b}` several; `%-t{…}`, `%-tv{…}` (also written `%t-{…}`, `%tv-{…}`)
// keep only the tags that vary between the streams. Several tags are joined with commas.
import type { Stream } from '../stream.js';

export const tagCategory = (tag: string) => tag.slice(0, tag.indexOf(':') < 0 ? tag.length : tag.indexOf(':'));
export const tagValue = (tag: string) => (tag.indexOf(':') < 0 ? '' : tag.slice(tag.indexOf(':') + 1));

const PLACEHOLDER = /%(cn|n|d)|%(-?)(tv|t)(-?)\{([^}]*)\}/g;

export function formatLabel(fmt: string, s: Stream, index: number, all: readonly Stream[]): string {
  return fmt.replace(PLACEHOLDER, (_, simple: string | undefined, before: string, form: string, after: string, cats: string) => {
    if (simple === 'd') return String(index);
    if (simple === 'n') return s.name;
    if (simple === 'cn') return s.canonical;
    const wanted = cats.split(',').map((c) => c.trim());
    let tags = s.tags.filter((t) => (wanted.includes('*') ? !tagCategory(t).startsWith('__') : wanted.includes(tagCategory(t))));
    if (before === '-' || after === '-') tags = tags.filter((t) => !all.every((o) => o.tags.includes(t)));
    return tags.map((t) => (form === 'tv' ? tagValue(t) : t)).join(',');
  });
}
