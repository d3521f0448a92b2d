// Replays a Dockerfile's build without a Docker engine: the build context as `.dockerignore`
// filters it, then each stage in a directory of its own standing for the stage's root
// filesystem, its COPY and RUN steps executed in order. A step the replay cannot perform
// faithfully fails the build, so the test guarding the image cannot pass by skipping it.
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import dockerignoreModule from '@balena/dockerignore';
import { applyConfig, emptyConfig, type Command, type ImageConfig, type Stage } from './dockerfile.js';

/** What a replayed stage left behind: its filesystem and the image configuration it set. */
export interface BuiltStage {
  name: string | null;
  /** Host directory standing for the stage's `/`. */
  root: string;
  config: ImageConfig;
  /** Container path → `user:group` given by `chown` steps. */
  owners: Map<string, string>;
}

/** Where a path inside the stage's filesystem lives on this machine. */
export function hostPath(stage: BuiltStage, containerPath: string): string {
  return path.join(stage.root, path.posix.resolve(stage.config.workdir, containerPath));
}

// The package is CommonJS (module.exports = the factory) while its typings declare an ES
// default export; Node hands an ES import the factory itself.
const dockerignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;

/** The patterns of `contextDir`'s `.dockerignore` (none without one). */
export function dockerignorePatterns(contextDir: string): string[] {
  const file = path.join(contextDir, '.dockerignore');
  return existsSync(file) ? readFileSync(file, 'utf8').split(/\r?\n/) : [];
}

/** Whether Docker leaves `relativePath` out of the build context. */
export function contextIgnores(patterns: string[], relativePath: string): boolean {
  return dockerignore().add(patterns).ignores(relativePath);
}

/** Copies `contextDir` into `dest` leaving out what `.dockerignore` excludes. */
export function copyContext(contextDir: string, dest: string): void {
  const patterns = dockerignorePatterns(contextDir);
  const ig = dockerignore().add(patterns);
  // An excluded directory may still hold a re-included path (`!pattern`); only without
  // exceptions can the walk skip it whole, which keeps node_modules from being walked.
  const hasExceptions = patterns.some((p) => p.trim().startsWith('!'));
  const walk = (rel: string): void => {
    for (const entry of readdirSync(path.join(contextDir, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const ignored = ig.ignores(child);
      if (entry.isDirectory()) {
        if (ignored && !hasExceptions) continue;
        if (!ignored) mkdirSync(path.join(dest, child), { recursive: true });
        walk(child);
      } else if (!ignored) {
        mkdirSync(path.dirname(path.join(dest, child)), { recursive: true });
        cpSync(path.join(contextDir, child), path.join(dest, child), { verbatimSymlinks: true });
      }
    }
  };
  mkdirSync(dest, { recursive: true });
  walk('');
}

/**
 * Builds every stage of `stages` from `context` (an already filtered context directory)
 * under `scratch`; returns them in order, the image being the last.
 */
export async function replayBuild(stages: Stage[], context: string, scratch: string): Promise<BuiltStage[]> {
  const built: BuiltStage[] = [];
  for (const [i, stage] of stages.entries()) {
    const root = path.join(scratch, `stage-${i}`);
    mkdirSync(root, { recursive: true });
    const current: BuiltStage = { name: stage.name, root, config: emptyConfig(), owners: new Map() };
    for (const step of stage.instructions) {
      applyConfig(current.config, step);
      const where = `Dockerfile line ${step.line}`;
      if (step.kind === 'WORKDIR') mkdirSync(hostPath(current, '.'), { recursive: true });
      if (step.kind === 'RUN') await runStep(current, step.command, where);
      if (step.kind === 'COPY') {
        const fromRoot = step.from === null ? context : stageRoot(built, step.from, where);
        copyStep(step.sources.map((s) => path.join(fromRoot, path.posix.resolve('/', s))), hostPath(current, step.dest), step.dest.endsWith('/'), where);
      }
    }
    built.push(current);
  }
  return built;
}

function stageRoot(built: BuiltStage[], from: string, where: string): string {
  const stage = built.find((s, i) => s.name === from || String(i) === from);
  if (stage === undefined) throw new Error(`${where}: COPY --from=${from} names no earlier stage (the replay does not pull images)`);
  return stage.root;
}

/** Docker's COPY: a directory's contents go into the destination, a file into it or as it. */
function copyStep(sources: string[], dest: string, destIsDir: boolean, where: string): void {
  for (const source of sources) {
    if (!existsSync(source)) throw new Error(`${where}: COPY source ${source} is not in the context (excluded by .dockerignore?)`);
    const target = statSync(source).isDirectory() || !(destIsDir || sources.length > 1) ? dest : path.join(dest, path.basename(source));
    mkdirSync(statSync(source).isDirectory() ? target : path.dirname(target), { recursive: true });
    cpSync(source, target, { recursive: true, verbatimSymlinks: true });
  }
}

/**
 * A RUN step, one `&&`-joined command at a time. npm and node commands run for real in the
 * stage's working directory. Steps that would change this machine's system are checked
 * instead: `apt-get install` must name packages installed here (this machine is Debian
 * bookworm, as the base image is), `mkdir -p` and `chown` act on the stage's directory.
 * Any other command fails the replay rather than run on the host.
 */
async function runStep(stage: BuiltStage, command: Command, where: string): Promise<void> {
  if (command.exec) throw new Error(`${where}: RUN in exec form is not supported by the replay`);
  for (const part of command.args[0]!.split(/\s*&&\s*/)) {
    const words = part.trim().split(/\s+/);
    const [program, ...args] = words;
    if (program === 'npm' || program === 'node') await sh(stage, part, where);
    else if (program === 'apt-get' && args[0] === 'update') continue;
    else if (program === 'apt-get' && args[0] === 'install') requireDebianPackages(args.slice(1).filter((a) => !a.startsWith('-')), where);
    else if (program === 'rm' && args[0] === '-rf' && args.slice(1).every((a) => a === '/var/lib/apt/lists/*')) continue;
    else if (program === 'rm' && args[0] === '-rf') for (const p of args.slice(1)) rmSync(hostPath(stage, relativeOnly(p, where)), { recursive: true, force: true });
    else if (program === 'mkdir' && args[0] === '-p') for (const p of args.slice(1)) mkdirSync(hostPath(stage, p), { recursive: true });
    else if (program === 'chown' && args.length >= 2 && !args[0]!.startsWith('-')) for (const p of args.slice(1)) stage.owners.set(path.posix.resolve(stage.config.workdir, p), args[0]!);
    else throw new Error(`${where}: the image test cannot replay \`${part}\` (teach test/helpers/image-replay.ts)`);
  }
}

function relativeOnly(p: string, where: string): string {
  if (p.startsWith('/') || p.split('/').includes('..')) throw new Error(`${where}: rm -rf ${p} reaches outside the working directory`);
  return p;
}

function requireDebianPackages(packages: string[], where: string): void {
  for (const name of packages) {
    let status = '';
    try {
      status = execFileSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      /* not known to dpkg */
    }
    if (!status.endsWith('installed')) throw new Error(`${where}: the image installs the Debian package ${name}, which this machine lacks (apt-get install ${name})`);
  }
}

/**
 * Runs a shell command in the stage's working directory with the stage's environment on a
 * container-like base (PATH and HOME only: no npm_* variables of a surrounding `npm test`).
 * npm prefers its local cache, as a Docker build with a warm cache would. At the lowest CPU
 * priority: installing and compiling is minutes of work that the test files running beside
 * this one, some with time limits of their own, must not wait behind.
 */
async function sh(stage: BuiltStage, command: string, where: string): Promise<void> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...stage.config.env, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };
  const child = spawn('nice', ['-n', '19', '/bin/sh', '-c', command], { cwd: hostPath(stage, '.'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`${where}: \`${command}\` exited with ${code}:\n${output.slice(-4000)}`);
}
