// Where options come from, lowest precedence first: defaults, a JSON config file
// (--config), environment variables (FERRITE_<OPTION>), command-line flags.
import { readFileSync } from 'node:fs';
import { defaultConfig, resolveConfig, type FerriteConfig } from '../model/config.js';

type Overrides = Partial<Record<keyof FerriteConfig, unknown>>;

/** `dataDir` ↔ `FERRITE_DATA_DIR`. */
export function envName(option: string): string {
  return `FERRITE_${option.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

export function fromFile(path: string | undefined): Overrides {
  if (path === undefined) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    return parsed as Overrides;
  } catch (error) {
    throw new Error(`config file ${path} is not a JSON object: ${(error as Error).message}`);
  }
}

export function fromEnv(env: NodeJS.ProcessEnv): Overrides {
  const defaults = defaultConfig() as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, fallback] of Object.entries(defaults)) {
    const raw = env[envName(key)];
    if (raw === undefined) continue;
    // Options defaulting to null (nodeId, topology, nats, extensionsDir) are strings when set.
    const structured = (typeof fallback === 'object' && fallback !== null) || typeof fallback === 'boolean';
    out[key] = typeof fallback === 'number' ? Number(raw) : structured ? parseJsonEnv(key, raw) : raw;
  }
  return out as Overrides;
}

export function loadConfig(flags: Overrides & { config?: string }, env: NodeJS.ProcessEnv): FerriteConfig {
  const { config: file, ...cli } = flags;
  const defined = Object.fromEntries(Object.entries(cli).filter(([, v]) => v !== undefined));
  return resolveConfig({ ...fromFile(file), ...fromEnv(env), ...defined });
}

/** Structured options (rollup levels) are given as JSON in their environment variable. */
function parseJsonEnv(key: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new Error(`${envName(key)} must be JSON: ${(error as Error).message}`);
  }
}
