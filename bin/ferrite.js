#!/usr/bin/env node
// The `ferrite` command. The TypeScript sources compile to dist/ (npm ci runs the build).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/bin/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  console.error('ferrite is not built: run `npm ci` (or `npm run build`) first.');
  process.exit(1);
}
await import(cli.href);
