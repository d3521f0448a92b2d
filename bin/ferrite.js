#!/usr/bin/env node
// The `ferrite` command. The TypeScript sources compile to dist/ (npm ci runs the build).
// Started by a Node older than ferrite supports (a machine's system Node, run outside npm),
// it runs itself again on the npm-packaged Node that `npm ci` installed, when there is one.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MIN_MAJOR = 22;
const major = Number(process.versions.node.split('.')[0]);
if (major < MIN_MAJOR) {
  const packaged = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(packaged)) {
    console.error(`ferrite needs Node.js ${MIN_MAJOR}.15 or newer (this is ${process.version}): run it through npm (npm start, npx ferrite) after npm ci, or install Node 24.`);
    process.exit(1);
  }
  const child = spawn(packaged, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // A stop asked of this process is the node's to handle (SIGTERM drains and seals).
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
} else {
  const cli = new URL('../dist/bin/cli.js', import.meta.url);
  if (!existsSync(fileURLToPath(cli))) {
    console.error('ferrite is not built: run `npm ci` (or `npm run build`) first.');
    process.exit(1);
  }
  await import(cli.href);
}

