// How figures are shown.
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(u === 0 ? 0 : 1)} ${units[u]}`;
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const parts = (big: number, bigUnit: string, small: number, smallUnit: string) => (small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`);
  if (seconds < 60) return `${Number.isInteger(seconds) || seconds >= 10 ? Math.round(seconds) : seconds.toFixed(1)} s`;
  if (seconds < 3600) return parts(Math.floor(seconds / 60), 'min', Math.floor(seconds % 60), 's');
  if (seconds < 86400) return parts(Math.floor(seconds / 3600), 'h', Math.floor((seconds % 3600) / 60), 'min');
  return parts(Math.floor(seconds / 86400), 'd', Math.floor((seconds % 86400) / 3600), 'h');
}

export function count(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}

export function time(epochS: number): string {
  return new Date(epochS * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** A uuid's first group, enough to tell nodes apart. */
export const short = (id: string): string => id.slice(0, 8);
