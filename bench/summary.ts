// The headline figures of every benchmark, gathered into one table. Each benchmark prints its
// own detailed tables; it also records its headline figures here, and when `BENCH_SUMMARY`
// names a file (as `npm run bench` sets it) they are appended to it as JSON lines, which
// bench/all.ts turns into the Markdown table of the README's Performance section.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface Figure {
  /** The benchmark, as its npm script is named: `ingest`, `fetch`, `devops`, … */
  bench: string;
  /** What was measured, e.g. `TSV ingest`, `/fetch 100 streams average+sum median`. */
  measure: string;
  unit: string;
  ferrite: number;
  /** VictoriaMetrics' figure on the same data in the same run; null where it has none. */
  peer: number | null;
  /** Which way is better, so the ratio reads "how many times better than the peer". */
  better: 'higher' | 'lower';
}

export function recordFigure(figure: Figure): void {
  const file = process.env.BENCH_SUMMARY;
  if (file) appendFileSync(file, `${JSON.stringify(figure)}\n`);
}

export function readFigures(file: string): Figure[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Figure);
}

/** Drops a benchmark's rows from a kept figures file before it runs again. */
export function forgetFigures(file: string, bench: string): void {
  const kept = readFigures(file).filter((f) => f.bench !== bench);
  writeFileSync(file, kept.map((f) => `${JSON.stringify(f)}\n`).join(''));
}

/** A benchmark run on its own with `--figures <file>`: its rows there replace those of its last run. */
export function keepFiguresIn(file: string, bench: string): void {
  forgetFigures(file, bench);
  process.env.BENCH_SUMMARY = file;
}

/** ferrite's figure over the peer's, turned so that above 1 means ferrite is better. */
export function advantage(f: Figure): number | null {
  if (f.peer === null || f.peer === 0 || f.ferrite === 0) return null;
  return f.better === 'higher' ? f.ferrite / f.peer : f.peer / f.ferrite;
}

const number = (v: number): string => (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3)).toString());

export function figuresTable(figures: Figure[]): string {
  const rows = figures.map((f) => {
    const ratio = advantage(f);
    return `| ${f.bench} | ${f.measure} | ${number(f.ferrite)} ${f.unit} | ${f.peer === null ? '–' : `${number(f.peer)} ${f.unit}`} | ${ratio === null ? '–' : `${ratio.toFixed(2)}×`} |`;
  });
  return ['| bench | measure | ferrite | VictoriaMetrics | ferrite advantage |', '|---|---|---|---|---|', ...rows].join('\n');
}
