import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import test from 'ava';
import { envName, fromEnv, loadConfig } from '../bin/config-sources.js';
import { ConfigError, defaultConfig, resolveConfig } from '../model/config.js';
import { ERRORS } from '../model/errors.js';
import { memoryLimitBytes } from '../model/resident-memory.js';

test('every error code is documented in docs/errors.md, and nothing else is', (t) => {
  const doc = readFileSync('docs/errors.md', 'utf8');
  const documented = new Set([...doc.matchAll(/`(FER_ERR_[A-Z_]+)`/g)].map((m) => m[1]));
  for (const [code, { status }] of Object.entries(ERRORS)) {
    t.true(documented.has(code), `${code} is not documented`);
    t.regex(doc, new RegExp(`\`${code}\`\\s*\\|\\s*${status}`), `${code} documented with the wrong status`);
  }
  for (const code of documented) t.true(code! in ERRORS, `${code} is documented but does not exist`);
});

test('config defaults validate and bad options name the property', (t) => {
  t.deepEqual(resolveConfig({}), defaultConfig());
  const bad = (o: Record<string, unknown>) => t.throws(() => resolveConfig(o), { instanceOf: ConfigError });
  t.regex(bad({ port: 70000 })!.message, /port/);
  t.regex(bad({ partitions: 0 })!.message, /partitions/);
  t.regex(bad({ conflictResolver: 'newest' })!.message, /conflictResolver/);
  t.regex(bad({ nodeId: 'x' })!.message, /nodeId/);
  t.regex(bad({ bogus: 1 })!.message, /bogus: unknown option/);
});

test('environment variables and flags override in order', (t) => {
  t.is(envName('dataDir'), 'FERRITE_DATA_DIR');
  t.deepEqual(fromEnv({ FERRITE_PORT: '9000', FERRITE_DATA_DIR: '/x' }), { port: 9000, dataDir: '/x' });
  const c = loadConfig({ port: 9100 }, { FERRITE_PORT: '9000', FERRITE_HOST: '0.0.0.0' });
  t.is(c.port, 9100);
  t.is(c.host, '0.0.0.0');
});

test('peerTimeoutMs: 5 s by default, FERRITE_PEER_TIMEOUT_MS sets it, out-of-range values name it', (t) => {
  t.is(defaultConfig().peerTimeoutMs, 5000);
  t.is(loadConfig({}, { FERRITE_PEER_TIMEOUT_MS: '1500' }).peerTimeoutMs, 1500);
  for (const peerTimeoutMs of [0, 99, 600_001, 2.5, '5000']) {
    t.throws(() => resolveConfig({ peerTimeoutMs }), { instanceOf: ConfigError, message: /peerTimeoutMs/ });
  }
});

test('memoryLimitMb: configured in MiB, else the machine (or its container) gives the limit; bad values name it', (t) => {
  t.is(memoryLimitBytes(512), 512 * 2 ** 20);
  const machine = memoryLimitBytes(0);
  t.true(machine > 0 && machine <= totalmem());
  t.is(resolveConfig({}).memoryLimitMb, 0);
  t.throws(() => resolveConfig({ memoryLimitMb: -1 }), { instanceOf: ConfigError, message: /memoryLimitMb/ });
  t.throws(() => resolveConfig({ memoryLimitMb: 1.5 }), { instanceOf: ConfigError, message: /memoryLimitMb/ });
});
