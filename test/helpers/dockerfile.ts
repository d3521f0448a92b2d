// A parser for the Dockerfile instructions ferrite's image uses, so a test can replay the
// image's build without a Docker engine. Anything it does not know is an error, not a skip:
// an instruction the replay would ignore is one whose effect the test would not check.
import path from 'node:path';

/** A command in exec form (`["node", "x.js"]`) or shell form (`npm ci`, run by `/bin/sh -c`). */
export interface Command {
  exec: boolean;
  args: string[];
}

export type Instruction =
  | { kind: 'WORKDIR'; line: number; path: string }
  | { kind: 'COPY'; line: number; from: string | null; chown: string | null; sources: string[]; dest: string }
  | { kind: 'RUN'; line: number; command: Command }
  | { kind: 'ENV'; line: number; vars: Record<string, string> }
  | { kind: 'USER'; line: number; user: string }
  | { kind: 'VOLUME'; line: number; paths: string[] }
  | { kind: 'EXPOSE'; line: number; ports: string[] }
  | { kind: 'STOPSIGNAL'; line: number; signal: string }
  | { kind: 'HEALTHCHECK'; line: number; options: Record<string, string>; command: Command }
  | { kind: 'CMD'; line: number; command: Command };

export interface Stage {
  base: string;
  name: string | null;
  instructions: Instruction[];
}

/** The image configuration a stage's instructions set (what `docker inspect` would show). */
export interface ImageConfig {
  workdir: string;
  env: Record<string, string>;
  user: string | null;
  volumes: string[];
  expose: string[];
  stopSignal: string | null;
  healthcheck: { options: Record<string, string>; command: Command } | null;
  cmd: Command | null;
}

export function emptyConfig(): ImageConfig {
  return { workdir: '/', env: {}, user: null, volumes: [], expose: [], stopSignal: null, healthcheck: null, cmd: null };
}

/** Folds one instruction's effect on the configuration into `config`. */
export function applyConfig(config: ImageConfig, step: Instruction): void {
  switch (step.kind) {
    case 'WORKDIR':
      config.workdir = path.posix.resolve(config.workdir, step.path);
      break;
    case 'ENV':
      Object.assign(config.env, step.vars);
      break;
    case 'USER':
      config.user = step.user;
      break;
    case 'VOLUME':
      config.volumes.push(...step.paths);
      break;
    case 'EXPOSE':
      config.expose.push(...step.ports);
      break;
    case 'STOPSIGNAL':
      config.stopSignal = step.signal;
      break;
    case 'HEALTHCHECK':
      config.healthcheck = { options: step.options, command: step.command };
      break;
    case 'CMD':
      config.cmd = step.command;
      break;
    case 'COPY':
    case 'RUN':
      break; // change the filesystem only
  }
}

export function imageConfig(stage: Stage): ImageConfig {
  const config = emptyConfig();
  for (const step of stage.instructions) applyConfig(config, step);
  return config;
}

export class DockerfileError extends Error {
  constructor(line: number, message: string) {
    super(`Dockerfile line ${line}: ${message}`);
    this.name = 'DockerfileError';
  }
}

/** Parses the text of a Dockerfile into its build stages, in order. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const { line, keyword, rest } of logicalLines(text)) {
    if (keyword === 'FROM') {
      stages.push(parseFrom(line, rest));
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new DockerfileError(line, `${keyword} before the first FROM`);
    stage.instructions.push(parseInstruction(line, keyword, rest));
  }
  if (stages.length === 0) throw new DockerfileError(1, 'no FROM');
  return stages;
}

interface LogicalLine {
  line: number;
  keyword: string;
  rest: string;
}

/** Joins `\`-continued lines and drops comments and blank lines, as Docker does. */
function logicalLines(text: string): LogicalLine[] {
  const out: LogicalLine[] = [];
  let pending: { line: number; text: string } | null = null;
  text.split(/\r?\n/).forEach((raw, i) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith('#') || (trimmed === '' && pending === null)) return;
    const continued = trimmed.endsWith('\\');
    const body = continued ? trimmed.slice(0, -1) : trimmed;
    pending = pending === null ? { line: i + 1, text: body } : { line: pending.line, text: `${pending.text} ${body}` };
    if (continued) return;
    out.push(split(pending));
    pending = null;
  });
  if (pending !== null) out.push(split(pending));
  return out;
}

function split({ line, text }: { line: number; text: string }): LogicalLine {
  const match = /^(\S+)\s*(.*)$/s.exec(text.trim())!;
  return { line, keyword: match[1]!.toUpperCase(), rest: match[2]!.trim() };
}

function parseFrom(line: number, rest: string): Stage {
  const words = rest.split(/\s+/);
  if (words.length === 1) return { base: words[0]!, name: null, instructions: [] };
  if (words.length === 3 && words[1]!.toUpperCase() === 'AS') return { base: words[0]!, name: words[2]!, instructions: [] };
  throw new DockerfileError(line, `FROM ${rest}: expected "FROM image [AS name]"`);
}

function parseInstruction(line: number, keyword: string, rest: string): Instruction {
  // The replay takes every value literally; a $VARIABLE would be expanded by Docker only.
  if (keyword !== 'RUN' && keyword !== 'HEALTHCHECK' && keyword !== 'CMD' && rest.includes('$')) {
    throw new DockerfileError(line, `${keyword}: variables are not supported by the image test's replay`);
  }
  switch (keyword) {
    case 'WORKDIR':
      return { kind: 'WORKDIR', line, path: rest };
    case 'COPY':
      return parseCopy(line, rest);
    case 'RUN':
      return { kind: 'RUN', line, command: parseCommand(line, rest) };
    case 'ENV':
      return { kind: 'ENV', line, vars: parseEnv(line, rest) };
    case 'USER':
      return { kind: 'USER', line, user: rest };
    case 'VOLUME':
      return { kind: 'VOLUME', line, paths: rest.startsWith('[') ? jsonArray(line, rest) : rest.split(/\s+/) };
    case 'EXPOSE':
      return { kind: 'EXPOSE', line, ports: rest.split(/\s+/) };
    case 'STOPSIGNAL':
      return { kind: 'STOPSIGNAL', line, signal: rest };
    case 'HEALTHCHECK':
      return parseHealthcheck(line, rest);
    case 'CMD':
      return { kind: 'CMD', line, command: parseCommand(line, rest) };
    default:
      throw new DockerfileError(line, `${keyword} is not an instruction the image test can replay (teach test/helpers/dockerfile.ts)`);
  }
}

/** Leading `--name=value` options of COPY and HEALTHCHECK. */
function takeOptions(rest: string): { options: Record<string, string>; remainder: string } {
  const options: Record<string, string> = {};
  let remainder = rest;
  for (let m = /^--([a-z-]+)=(\S+)\s*/.exec(remainder); m !== null; m = /^--([a-z-]+)=(\S+)\s*/.exec(remainder)) {
    options[m[1]!] = m[2]!;
    remainder = remainder.slice(m[0].length);
  }
  return { options, remainder };
}

function parseCopy(line: number, rest: string): Instruction {
  const { options, remainder } = takeOptions(rest);
  const unknown = Object.keys(options).filter((o) => o !== 'from' && o !== 'chown');
  if (unknown.length > 0) throw new DockerfileError(line, `COPY --${unknown[0]} is not supported by the image test's replay`);
  const words = remainder.startsWith('[') ? jsonArray(line, remainder) : remainder.split(/\s+/);
  if (words.length < 2) throw new DockerfileError(line, 'COPY needs a source and a destination');
  if (words.some((w) => /[*?[]/.test(w))) throw new DockerfileError(line, 'COPY wildcards are not supported by the image test\'s replay');
  return { kind: 'COPY', line, from: options.from ?? null, chown: options.chown ?? null, sources: words.slice(0, -1), dest: words.at(-1)! };
}

function parseHealthcheck(line: number, rest: string): Instruction {
  const { options, remainder } = takeOptions(rest);
  const cmd = /^CMD\s+(.*)$/is.exec(remainder);
  if (cmd === null) throw new DockerfileError(line, 'HEALTHCHECK: expected "HEALTHCHECK [--option=value ...] CMD command"');
  return { kind: 'HEALTHCHECK', line, options, command: parseCommand(line, cmd[1]!) };
}

function parseCommand(line: number, rest: string): Command {
  if (rest.startsWith('[')) return { exec: true, args: jsonArray(line, rest) };
  return { exec: false, args: [rest] };
}

function jsonArray(line: number, text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new DockerfileError(line, `not a JSON array: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) throw new DockerfileError(line, 'expected a JSON array of strings');
  return parsed;
}

/** `ENV A=1 B="two words"`, or the legacy single `ENV A value`. */
function parseEnv(line: number, rest: string): Record<string, string> {
  const first = /^([A-Za-z_][A-Za-z0-9_]*)(=|\s+)/.exec(rest);
  if (first === null) throw new DockerfileError(line, `ENV ${rest}: expected NAME=value`);
  if (first[2] !== '=') return { [first[1]!]: rest.slice(first[0].length) };
  const vars: Record<string, string> = {};
  const pair = /\s*([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/y;
  let at = 0;
  while (at < rest.length) {
    pair.lastIndex = at;
    const m = pair.exec(rest);
    if (m === null) throw new DockerfileError(line, `ENV: cannot read "${rest.slice(at)}"`);
    vars[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
    at = pair.lastIndex;
    while (rest[at] === ' ' || rest[at] === '\t') at++;
  }
  return vars;
}
