// Our interface to RocksDB (rocksdb-native). Nothing else imports the binding, so the
// rest of ferrite sees column families by name, atomic multi-family batches and
// bounded iterators.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { zstdCompressSync } from 'node:zlib';
import { open } from 'node:fs/promises';
import path from 'node:path';
import RocksDB from 'rocksdb-native';
import { ALL_COLUMN_FAMILIES, type ColumnFamilyName } from './keys.js';
import { DataDirError } from './open-error.js';

export interface Entry {
  key: Buffer;
  value: Buffer;
}

export interface Range {
  gte?: Buffer;
  lt?: Buffer;
  reverse?: boolean;
  limit?: number;
  /** Entries fetched per native call: larger for long scans, small when few are read. */
  capacity?: number;
  /** Keys only: entries come with empty values. */
  keysOnly?: boolean;
}

type Session = InstanceType<typeof RocksDB>;

/**
 * Memtable size per column family. rocksdb-native's default (64 MiB, two per family) would
 * let ten families hold over a gigabyte of memtables; only the journal, which every write
 * passes through, gets a large one.
 */
const WRITE_BUFFER_BYTES: Partial<Record<ColumnFamilyName, number>> = { journal: 32 << 20, numeric: 16 << 20, index: 16 << 20, metrics: 16 << 20, rollup: 16 << 20 };
const SMALL_WRITE_BUFFER = 4 << 20;

/**
 * RocksDB renames its info log (`LOG`, ≈ 150 kB here: every open dumps each column family's
 * options) to `LOG.old.<µs>` at every open and keeps a thousand of them; rocksdb-native does not
 * expose `keep_log_file_num`. We keep one run's log besides the current one, compressed
 * (`LOG.old.<µs>.zst`, ≈ a tenth; `zstd -d` reads it): a small node's data dir is otherwise mostly
 * logs. A clean close compresses the log of the run it ends (`closedRunFiles`).
 */
function pruneOldInfoLogs(dir: string): void {
  const files = readdirSync(dir);
  // A compression a crash interrupted: its source is still there.
  for (const f of files.filter((f) => /^(LOG\.old\.\d+|OPTIONS-\d+)\.zst\.tmp$/.test(f))) rmSync(path.join(dir, f), { force: true });
  const old = files.filter((f) => /^LOG\.old\.\d+(\.zst)?$/.test(f)).sort((a, b) => infoLogTime(b) - infoLogTime(a) || (a.endsWith('.zst') ? -1 : 1));
  const [previous, ...older] = old;
  for (const f of older) rmSync(path.join(dir, f), { force: true });
  if (previous !== undefined && !previous.endsWith('.zst')) compressFile(path.join(dir, previous));
  // RocksDB wrote this run's options file: the last run's, compressed at its close, goes.
  for (const f of files.filter((f) => /^OPTIONS-\d+\.zst$/.test(f))) rmSync(path.join(dir, f), { force: true });
}

/**
 * After a clean close: the run's info log becomes `LOG.old.<µs>.zst` (the next open keeps it only) and
 * RocksDB's options files (≈ 55 kB each, only tools such as `ldb` read them; RocksDB writes one at
 * every open) are kept compressed as `OPTIONS-<n>.zst`, the newest only. A stopped node's data
 * dir then holds a few kB of them instead of ≈ 400 kB.
 */
function closedRunFiles(dir: string): void {
  const files = readdirSync(dir);
  if (files.includes('LOG')) {
    const closed = path.join(dir, `LOG.old.${Date.now() * 1000}`);
    renameSync(path.join(dir, 'LOG'), closed);
    compressFile(closed);
  }
  const options = files.filter((f) => /^OPTIONS-\d+$/.test(f)).sort((a, b) => optionsNumber(b) - optionsNumber(a));
  const [newest, ...older] = options;
  for (const f of older) rmSync(path.join(dir, f), { force: true });
  if (newest !== undefined) compressFile(path.join(dir, newest));
}

/** `file` → `file.zst`, the source removed once the copy is whole (a crash leaves the source and at most a `.tmp`). */
function compressFile(file: string): void {
  writeFileSync(`${file}.zst.tmp`, zstdCompressSync(readFileSync(file)));
  renameSync(`${file}.zst.tmp`, `${file}.zst`);
  rmSync(file, { force: true });
}

/** The microseconds in an old info log's name. */
function infoLogTime(name: string): number {
  return Number(/^LOG\.old\.(\d+)/.exec(name)![1]);
}

const optionsNumber = (name: string): number => Number(/^OPTIONS-(\d+)/.exec(name)![1]);

const EMPTY = Buffer.alloc(0);

/** Entries per batch when copying a store. */
const COPY_BATCH_ENTRIES = 4096;

export class Store {
  /** Per column family, how many batches that wrote to it have been written (caches of decoded values check it). */
  private readonly generations = new Map<ColumnFamilyName, number>();

  private constructor(
    private readonly root: Session,
    private readonly families: ReadonlyMap<ColumnFamilyName, Session>,
    readonly path: string,
  ) {}

  /** Set when every written batch must be on disk (its WAL fsynced) before `write` resolves (`syncWrites`). */
  private walSync: WalSync | null = null;

  /** Opens (creating if missing) the RocksDB at `path`; a DataDirError says why it cannot. */
  static async open(path: string, options: { syncWrites?: boolean } = {}): Promise<Store> {
    const store = await Store.openUnsynced(path);
    if (options.syncWrites === true) {
      store.walSync = new WalSync(path, () => store.root.currentWalFile() as Promise<{ path: string }>);
      await store.walSync.noteCurrentFile();
    }
    return store;
  }

  /** fsyncs of the WAL done so far (`syncWrites`), and the batches they covered. */
  get syncFigures(): { fsyncs: number; batches: number } | null {
    return this.walSync === null ? null : { fsyncs: this.walSync.fsyncs, batches: this.walSync.batches };
  }

  private static async openUnsynced(path: string): Promise<Store> {
    try {
      const columnFamilies = ALL_COLUMN_FAMILIES.map((name) => new RocksDB.ColumnFamily(name, { writeBufferSize: WRITE_BUFFER_BYTES[name] ?? SMALL_WRITE_BUFFER }));
      const root = new RocksDB(path, { columnFamilies });
      const families = new Map<ColumnFamilyName, Session>();
      for (const name of ALL_COLUMN_FAMILIES) families.set(name, root.columnFamily(name));
      await root.ready();
      pruneOldInfoLogs(path);
      return new Store(root, families, path);
    } catch (error) {
      throw new DataDirError(path, error);
    }
  }

  batch(): StoreBatch {
    return new StoreBatch(
      this.root,
      this.families,
      (written) => {
        for (const cf of written) this.generations.set(cf, this.generation(cf) + 1);
      },
      this.walSync,
    );
  }

  /** Changes after every written batch that touched `cf`: a value cached at one generation is current while it holds. */
  generation(cf: ColumnFamilyName): number {
    return this.generations.get(cf) ?? 0;
  }

  async get(cf: ColumnFamilyName, key: Buffer): Promise<Buffer | null> {
    return (await this.family(cf).get(key)) as Buffer | null;
  }

  /** Point reads of many keys in one native call (null where a key is absent). */
  async getMany(cf: ColumnFamilyName, keys: readonly Buffer[]): Promise<(Buffer | null)[]> {
    if (keys.length === 0) return [];
    const batch = this.family(cf).read({ capacity: keys.length, autoDestroy: true });
    const values = keys.map((k) => batch.get(k) as Promise<Buffer | null>);
    batch.tryFlush();
    return Promise.all(values);
  }

  /** Iterates a key range of one column family in key order (or reverse). */
  async *scan(cf: ColumnFamilyName, range: Range): AsyncGenerator<Entry> {
    const opts: Record<string, unknown> = { reverse: range.reverse ?? false, capacity: range.capacity ?? 64 };
    if (range.gte) opts.gte = range.gte;
    if (range.lt) opts.lt = range.lt;
    if (range.limit !== undefined) opts.limit = range.limit;
    if (range.keysOnly === true) opts.values = false;
    for await (const entry of this.family(cf).iterator(opts)) yield (range.keysOnly === true ? { key: (entry as Entry).key, value: EMPTY } : entry) as Entry;
  }

  /** The first and last keys of a range (two one-key seeks, however wide the range), or null when it is empty. */
  async keyBounds(cf: ColumnFamilyName, range: { gte: Buffer; lt: Buffer }): Promise<[Buffer, Buffer] | null> {
    let first: Buffer | null = null;
    for await (const { key } of this.scan(cf, { ...range, limit: 1, keysOnly: true })) first = key;
    if (first === null) return null;
    for await (const { key } of this.scan(cf, { ...range, limit: 1, reverse: true, keysOnly: true })) return [first, key];
    return [first, first];
  }

  /**
   * Copies every column family as of one moment (a RocksDB snapshot: writes go on meanwhile)
   * into a new store at `dest`, flushed to SST files. Resolves with the bytes copied.
   */
  async copySnapshotTo(dest: string): Promise<number> {
    const snapshot = this.root.snapshot();
    const target = await Store.openUnsynced(dest);
    let bytes = 0;
    try {
      for (const cf of ALL_COLUMN_FAMILIES) {
        const source = snapshot.columnFamily(cf);
        try {
          let batch = target.batch();
          for await (const { key, value } of source.iterator({ capacity: 1024 }) as AsyncIterable<Entry>) {
            batch.put(cf, key, value);
            bytes += key.length + value.length;
            if (batch.size >= COPY_BATCH_ENTRIES) {
              await batch.write();
              batch = target.batch();
            }
          }
          await batch.write();
        } finally {
          await source.close();
        }
      }
      await target.flushAll();
    } finally {
      await snapshot.close();
      await target.close();
    }
    return bytes;
  }

  /** Compacts one column family, dropping what range deletes left behind. */
  async compact(cf: ColumnFamilyName): Promise<void> {
    await this.family(cf).compact();
  }

  /** What one column family holds: live SST files on disk and memtables in memory (RocksDB's own figures). */
  async familySize(cf: ColumnFamilyName): Promise<{ sstBytes: number; memtableBytes: number }> {
    const session = this.family(cf);
    const property = async (name: string) => Number((await session.getProperty(name)) ?? 0);
    return { sstBytes: await property('rocksdb.live-sst-files-size'), memtableBytes: await property('rocksdb.cur-size-all-mem-tables') };
  }

  /** Writes every column family's memtable to SST files, so the WAL can be dropped. */
  async flushAll(): Promise<void> {
    for (const session of this.families.values()) await session.flush();
  }

  async close(): Promise<void> {
    for (const session of this.families.values()) await session.close();
    await this.root.close();
    closedRunFiles(this.path);
  }

  private family(cf: ColumnFamilyName): Session {
    const session = this.families.get(cf);
    if (!session) throw new Error(`BUG: unknown column family ${cf}`);
    return session;
  }
}

/**
 * One atomic write across column families. rocksdb-native ties a batch to the column
 * family of the session that made it, while the native write takes a family per
 * operation; so the batch is pointed at each family's session as operations are added,
 * and back at the root before it is flushed.
 */
export class StoreBatch {
  /** The native batch, made at the first operation: an unused batch must hold no handle, or close() waits for it. */
  private batch: any = null;
  private count = 0;
  private readonly touched = new Set<ColumnFamilyName>();

  constructor(
    private readonly root: Session,
    private readonly families: ReadonlyMap<ColumnFamilyName, Session>,
    private readonly written: (families: ReadonlySet<ColumnFamilyName>) => void,
    private readonly walSync: WalSync | null,
  ) {}

  get size(): number {
    return this.count;
  }

  put(cf: ColumnFamilyName, key: Buffer, value: Uint8Array): this {
    return this.op(cf, (b) => b.tryPut(key, value));
  }

  delete(cf: ColumnFamilyName, key: Buffer): this {
    return this.op(cf, (b) => b.tryDelete(key));
  }

  /** Removes [start, end) with one range tombstone, not key by key. */
  deleteRange(cf: ColumnFamilyName, start: Buffer, end: Buffer): this {
    return this.op(cf, (b) => b.tryDeleteRange(start, end));
  }

  async write(): Promise<void> {
    if (this.batch === null) return;
    this.batch._db = this.root;
    try {
      await this.batch.flush(); // autoDestroy releases the handle once written
    } finally {
      // Even a failed write may have changed the families: caches must not trust what they hold.
      this.written(this.touched);
    }
    await this.walSync?.sync();
  }

  /** Drops an unwritten batch, releasing its handle. */
  discard(): void {
    if (this.batch === null) return;
    this.batch._db = this.root;
    this.batch.destroy();
    this.batch = null;
  }

  private op(cf: ColumnFamilyName, add: (batch: any) => void): this {
    const session = this.families.get(cf);
    if (!session) throw new Error(`BUG: unknown column family ${cf}`);
    this.batch ??= this.root.write({ autoDestroy: true });
    this.batch._db = session;
    add(this.batch);
    this.count++;
    this.touched.add(cf);
    return this;
  }
}

/**
 * Group commit for `syncWrites`: rocksdb-native's writes take no `sync` option, so after a
 * batch is written its WAL file is fdatasync'ed. Batches written while one fsync runs share
 * the next: each caller waits for an fsync that started after its write finished. The WAL
 * written before a switch to a new file is synced too (a write may have gone to either).
 */
export class WalSync {
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private waiting = 0;
  private lastFile: string | null = null;
  fsyncs = 0;
  batches = 0;

  constructor(
    private readonly dir: string,
    private readonly currentWal: () => Promise<{ path: string }>,
  ) {}

  /**
   * Notes the WAL file written now (at open): if RocksDB switches to a new one before the
   * first fsync, the first batches' file is synced too.
   */
  async noteCurrentFile(): Promise<void> {
    this.lastFile = path.join(this.dir, (await this.currentWal()).path);
  }

  /** Resolves once the WAL, as it stands now, is on disk. */
  sync(): Promise<void> {
    this.waiting++;
    if (this.running === null) return this.start();
    this.queued ??= this.running.catch(() => undefined).then(() => {
      this.queued = null;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<void> {
    const covered = this.waiting;
    this.waiting = 0;
    const run = this.fsyncWal().then(() => {
      this.batches += covered;
    });
    this.running = run.finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async fsyncWal(): Promise<void> {
    const current = path.join(this.dir, (await this.currentWal()).path);
    const files = this.lastFile !== null && this.lastFile !== current ? [this.lastFile, current] : [current];
    for (const file of files) await fdatasync(file);
    this.lastFile = current;
    this.fsyncs++;
  }
}

async function fdatasync(file: string): Promise<void> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    // A WAL RocksDB has retired: its memtable was flushed into SST files, which RocksDB syncs.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
