// The container image, without a Docker engine: the Dockerfile's build replayed on the context
// exactly as .dockerignore filters it (test/helpers/image-replay.ts), then the node started as
// the image's CMD starts it with the image's environment, answering its HEALTHCHECK, and
// stopped by its STOPSIGNAL within the compose rig's stop grace period. Nothing else checks
// that the image builds, so a source folder the image leaves out fails here.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { freePort, waitHttp } from '../transport/ports.js';
import { imageConfig, parseDockerfile, type Command, type ImageConfig } from './helpers/dockerfile.js';
import { contextIgnores, copyContext, dockerignorePatterns, hostPath, replayBuild, type BuiltStage } from './helpers/image-replay.js';
import { durationMs, ferriteServices, loadCompose } from './helpers/compose.js';
import { CHECK, getJson, mLine, put, tempDir } from './helpers/node.js';

const stages = parseDockerfile(readFileSync('Dockerfile', 'utf8'));
const image = imageConfig(stages.at(-1)!);
/** How long compose gives a node between STOPSIGNAL and SIGKILL. */
const stopGraceMs = Math.min(...ferriteServices(loadCompose()).map(([, s]) => durationMs(s.stop_grace_period ?? '10s')));

test('the Dockerfile builds in stages and runs the node unprivileged, on the image port, health-checked and stopped by SIGTERM', (t) => {
  t.true(stages.length >= 2, 'a build stage with dev dependencies and a runtime stage without them');
  t.truthy(image.user, 'USER is set');
  t.false(['root', '0'].includes(image.user!.split(':')[0]!), `the node runs unprivileged, not as ${image.user}`);
  t.is(image.stopSignal, 'SIGTERM');
  t.not(image.healthcheck, null, 'HEALTHCHECK is set');
  t.is(image.cmd?.exec, true, 'CMD in exec form, so the node itself receives the stop signal');
  t.is(image.env.FERRITE_HOST, '0.0.0.0', 'listens on every interface of the container');
  t.deepEqual(image.expose, [image.env.FERRITE_PORT]);
  t.deepEqual(image.volumes, [image.env.FERRITE_DATA_DIR]);
  t.truthy(image.env.FERRITE_EXTENSIONS_DIR, 'the example extensions are configured');
  const patterns = dockerignorePatterns(process.cwd());
  for (const local of ['node_modules', 'dist', 'data', '.git']) t.true(contextIgnores(patterns, local), `.dockerignore excludes ${local}`);
});

test('the image builds from the filtered context; its node serves, passes its health check and stops gracefully', async (t) => {
  // Two npm installs' worth of work (the build stage's, with TypeScript) on a 2-core machine.
  t.timeout(20 * 60_000);
  const scratch = tempDir('ferrite-image-');
  let node: ChildProcess | null = null;
  try {
    const context = path.join(scratch, 'context');
    copyContext(process.cwd(), context);

    const built = await replayBuild(stages, context, scratch);
    t.false(existsSync(path.join(context, 'node_modules')), 'the context leaves out node_modules');
    t.false(existsSync(path.join(context, 'dist')), 'the context leaves out dist');
    const runtime = built.at(-1)!;
    t.true(existsSync(hostPath(runtime, 'dist/bin/cli.js')), 'the compiled node is in the image');
    t.false(existsSync(hostPath(runtime, 'node_modules/typescript')), 'no dev dependencies in the image');
    t.false(existsSync(hostPath(runtime, 'node_modules/ava')), 'no dev dependencies in the image');
    t.false(existsSync(hostPath(runtime, 'node_modules/.bin/node')), 'the image runs its base image\'s Node, not a second one');
    const extensions = hostPath(runtime, image.env.FERRITE_EXTENSIONS_DIR!);
    t.true(existsSync(extensions) && readdirSync(extensions).some((f) => f.endsWith('.lua')), 'the example extensions are in the image');
    t.regex(runtime.owners.get(image.env.FERRITE_DATA_DIR!) ?? '', new RegExp(`^${image.user}:`), 'the data volume belongs to the user the node runs as');

    // As a container with its data volume and a published port: the image's environment,
    // the data dir and port moved to free ones here, loopback only.
    const port = await freePort();
    const dataDir = path.join(scratch, 'data');
    const env = { ...containerEnv(runtime), FERRITE_DATA_DIR: dataDir, FERRITE_PORT: String(port), FERRITE_HOST: '127.0.0.1' };
    const started = run(runtime, image.cmd!, env);
    node = started.child;
    const url = `http://127.0.0.1:${port}`;
    await waitForStats(url, started);

    t.is(await runCheck(runtime, image, env), 0, 'HEALTHCHECK passes on a running node');
    const lua = await getJson(`${url}/extension/lua`);
    t.true(Object.keys(lua.json).includes('top_by_mean'), `the example extension is served: ${lua.text}`);
    const write = await put(url, mLine(`${Math.floor(Date.now() / 1000)}.000`, 'image_test', 'n', '1', CHECK));
    t.is(write.status, 200, `a write for the stop to seal: ${JSON.stringify(write.json)}`);

    node.kill(image.stopSignal as NodeJS.Signals);
    const code = await Promise.race([started.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), stopGraceMs).unref())]);
    t.is(code, 0, `the node stops by itself within the ${stopGraceMs / 1000} s stop grace period:\n${started.output()}`);
    t.regex(started.output(), /"msg":"stopped"/, 'the graceful stop sealed and closed the store');
    t.not(await runCheck(runtime, image, env), 0, 'HEALTHCHECK fails once the node is gone');
  } finally {
    if (node !== null && node.exitCode === null && node.signalCode === null) node.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  }
});

/**
 * The image's environment on a container-like base. Paths the image's ENV names inside its
 * filesystem (the extensions directory) point into the replayed stage here.
 */
function containerEnv(stage: BuiltStage): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
  for (const [key, value] of Object.entries(stage.config.env)) {
    env[key] = value.startsWith('/') && existsSync(hostPath(stage, value)) ? hostPath(stage, value) : value;
  }
  return env;
}

interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
}

/** Starts an exec- or shell-form command in the image's working directory. */
function run(stage: BuiltStage, command: Command, env: Record<string, string>): Running {
  const [program, ...args] = command.exec ? command.args : ['/bin/sh', '-c', command.args[0]!];
  const child = spawn(program!, args, { cwd: hostPath(stage, '.'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** The HEALTHCHECK command's exit code, as Docker runs it inside the container. */
async function runCheck(stage: BuiltStage, config: ImageConfig, env: Record<string, string>): Promise<number | null> {
  const check = run(stage, config.healthcheck!.command, env);
  const timeoutMs = durationMs(config.healthcheck!.options.timeout ?? '30s');
  const timer = setTimeout(() => check.child.kill('SIGKILL'), timeoutMs);
  const code = await check.exited;
  clearTimeout(timer);
  return code;
}

/** Waits for the node to answer /stats.json; its exit before that fails at once, with its log. */
async function waitForStats(url: string, node: Running): Promise<void> {
  const died = node.exited.then((code) => Promise.reject(new Error(`the node exited with ${code} before serving:\n${node.output()}`)));
  await Promise.race([waitHttp(`${url}/stats.json`, 60_000), died]);
}
