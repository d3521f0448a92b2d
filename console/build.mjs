// Bundles the operations console (console/src, TypeScript) into dist/console with esbuild:
// one script, one stylesheet (ours and uPlot's) and index.html. Everything the page loads
// ships in that directory, so the console works without network access.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, '..', 'dist', 'console');

mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: path.join(here, 'src', 'main.ts') },
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  target: ['es2022'],
  outdir: out,
  logLevel: 'warning',
});
copyFileSync(path.join(here, 'static', 'index.html'), path.join(out, 'index.html'));
