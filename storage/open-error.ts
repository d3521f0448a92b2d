// Why a data directory could not be opened, in one line an operator can act on (issue 17
// item 11). RocksDB reports every such failure as an EIO whose message names the system
// call's error; the common ones are restated in plain words, RocksDB's text kept after them.

/** Known RocksDB messages and what they mean for whoever starts the node. */
const CAUSES: readonly [RegExp, string][] = [
  // From another process: "While lock file: …/LOCK: Resource temporarily unavailable";
  // from this one: "lock hold by current process, …: No locks available".
  [/lock hold by current process|lock file.*(Resource temporarily unavailable|No locks available)/i, 'it is locked by another process (is a ferrite node already running on it?)'],
  [/exists but is not a directory/i, 'it is a file, not a directory'],
  [/Not a directory/i, 'part of the path is a file, not a directory'],
  [/Read-only file system/i, 'the file system is read-only'],
  [/Operation not permitted/i, 'the system does not permit it there (a special or protected file system?)'],
  [/Permission denied/i, `permission denied: the user this process runs as (uid ${process.getuid?.() ?? '?'}) must be able to create the directory, or read and write it`],
  [/No space left on device/i, 'no space left on the device'],
];

export class DataDirError extends Error {
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(`cannot open data directory ${path}: ${explain(cause)}`, { cause });
    this.name = 'DataDirError';
  }
}

function explain(error: unknown): string {
  const said = String((error as Error | null)?.message ?? error)
    .replace(/\s+/g, ' ')
    .trim();
  const known = CAUSES.find(([pattern]) => pattern.test(said));
  return known === undefined ? said : `${known[1]}; RocksDB said: ${said}`;
}
