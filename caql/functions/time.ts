// `time:*` (reference "Package time") and the IANA time zones window offsets align to.
// Fields follow the conventions of PromQL's date functions, which IRONdb's PromQL translation
// maps onto time:tz: month 1–12, monthday 1–31, weekday 0–6 from Sunday, yearday 1–366.
import { CaqlUserError } from '../errors.js';
import { sig } from '../signature.js';
import { numeric } from '../stream.js';
import { define, perSlot, type CaqlFunction } from './types.js';
import { lookupTable } from '../../model/lookup-table.js';

/** UTC offsets change only at whole quarter hours of UTC, so one lookup per quarter hour is exact. */
const QUARTER_HOUR_S = 900;

export interface TimeZone {
  name: string;
  /** Seconds to add to a UTC epoch for the local wall-clock time at that instant. */
  offsetS(epochS: number): number;
}

export function timeZone(fn: string, name: string): TimeZone {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: name, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  } catch {
    throw new CaqlUserError(`${fn}: '${name}' is not an IANA time zone (such as UTC, US/Eastern, Europe/Berlin)`);
  }
  const cache = new Map<number, number>();
  const offsetAt = (epochS: number) => {
    const parts = Object.fromEntries(format.formatToParts(new Date(epochS * 1000)).map((p) => [p.type, Number(p.value)]));
    return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) / 1000 - epochS;
  };
  return {
    name,
    offsetS(epochS) {
      const bucket = Math.floor(epochS / QUARTER_HOUR_S) * QUARTER_HOUR_S;
      let offset = cache.get(bucket);
      if (offset === undefined) cache.set(bucket, (offset = offsetAt(bucket)));
      return offset;
    },
  };
}

const FIELDS: Record<string, (d: Date) => number> = lookupTable({
  second: (d) => d.getUTCSeconds(),
  minute: (d) => d.getUTCMinutes(),
  hour: (d) => d.getUTCHours(),
  monthday: (d) => d.getUTCDate(),
  month: (d) => d.getUTCMonth() + 1,
  weekday: (d) => d.getUTCDay(),
  yearday: (d) => Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1,
  year: (d) => d.getUTCFullYear(),
});

const slotTime = (startS: number, periodS: number, i: number) => startS + i * periodS;

/** `time:epoch()`: each slot's start, epoch seconds. */
const epoch = define(sig(), async (inv) => [numeric({ label: 'time:epoch' }, perSlot(inv, (i) => slotTime(inv.grid.startS, inv.grid.periodS, i)))]);

/** `time:tz(timezone, field)`: a calendar field of each slot's start in the zone. */
const tz = define(sig('timezone:string, field:string'), async (inv) => {
  const zone = timeZone(inv.name, inv.str('timezone'));
  const field = FIELDS[inv.str('field')];
  if (field === undefined) throw new CaqlUserError(`${inv.name}: field must be one of ${Object.keys(FIELDS).join(', ')}, not '${inv.str('field')}'`);
  const values = perSlot(inv, (i) => {
    const t = slotTime(inv.grid.startS, inv.grid.periodS, i);
    return field(new Date((t + zone.offsetS(t)) * 1000));
  });
  return [numeric({ label: `${inv.str('timezone')} ${inv.str('field')}` }, values)];
});

export const TIME: Record<string, CaqlFunction> = lookupTable({ 'time:epoch': epoch, 'time:tz': tz });
