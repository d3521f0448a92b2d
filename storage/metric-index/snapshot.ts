// The index snapshot (docs/format/storage.md, "Index snapshot"): a shard that stops cleanly
// writes its whole metric index to one file beside its store, and the next open reads that
// file instead of rebuilding the index from every name record, type key and activity key
// (at 300k metrics a rebuild took 12 s of CPU; reading the file, a fraction of it).
//
// The file is only a cache of what the store says. It is used only when the store's
// `index_snapshot` state key holds the token written in the file: the key is written after
// the file (synced) at a clean stop, before the store's final flush, and deleted (and the
// file removed) at the next open before the index can change, so a file left by any run that
// did not stop cleanly is never read.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import type { ActivityWindow } from '../../model/activity.js';
import { CF, STATE_KEY } from '../keys.js';
import type { Store } from '../rocks.js';
import type { TermColumns } from './term-columns.js';

const MAGIC = Buffer.from('FXIS');
/**
 * 1: sections stored as they are; 2: each section one zstd frame (names and term texts shrink ~5×);
 * 3: term text lengths in UTF-8 bytes, not UTF-16 units; 4: each section's uncompressed length
 * before its frame (decompressed into one buffer of that size: in 16 KiB pieces joined after,
 * a million-series snapshot took 1.2 s). Files of earlier versions are not read (the index is
 * rebuilt from its records once).
 */
const VERSION = 4;
/** Per section: its frame's length and its uncompressed length (u32 each). */
const SECTION_HEAD = 8;
const TOKEN_BYTES = 16;

export interface CategoryImage {
  category: string;
  spelling: string | null;
  /** How many terms it has: the next this many of the image's terms, in byte order. */
  terms: number;
}

export interface AccountImage {
  account: number;
  /** Its all-ids list: where in the terms' postings, and how long. */
  allAt: number;
  allLength: number;
  categories: CategoryImage[];
}

/** The whole index as plain data, by dense id up to `size`; only live metrics (others are gaps). */
export interface IndexImage {
  size: number;
  storageIds: Uint8Array;
  /** 1 for a live metric, 0 for a gap. */
  alive: Uint8Array;
  typeBits: Uint8Array;
  accountOf: Uint32Array;
  checkOfId: Uint32Array;
  nameStart: Uint32Array;
  nameLength: Uint16Array;
  names: Uint8Array;
  /** [uuid, check name, account] by check id. */
  checks: [string, string, number][];
  accounts: AccountImage[];
  /** Every category's terms, in account then category order. */
  terms: TermColumns;
  activity: { start: Uint32Array; end: Uint32Array; more: [number, ActivityWindow[]][] };
}

/** The snapshot file of the shard store in `storeDir`. */
export const snapshotFile = (storeDir: string): string => `${storeDir}.index`;

/**
 * Writes `image` to `file` (synced, then renamed into place) and records its token in the
 * store: from then on, until the next open, the file is the index.
 */
export async function writeSnapshot(store: Store, file: string, image: IndexImage): Promise<void> {
  const token = randomBytes(TOKEN_BYTES);
  const partial = `${file}.partial`;
  const fd = openSync(partial, 'w');
  try {
    for (const part of encode(image, token)) writeSync(fd, part);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(partial, file);
  // Durable with the store's final flush at a clean stop.
  await store.batch().put(CF.state, STATE_KEY.indexSnapshot, token).write();
}

/**
 * The image a clean stop left, or null; either way the token is deleted (durably, before
 * anything else is written), so the file cannot be taken for the index again.
 */
export async function takeSnapshot(store: Store, file: string): Promise<IndexImage | null> {
  const token = await store.get(CF.state, STATE_KEY.indexSnapshot);
  if (token === null) return null;
  // If a crash loses this delete, it loses every later write with it (the WAL is in order),
  // and the file is removed below anyway.
  await store.batch().delete(CF.state, STATE_KEY.indexSnapshot).write();
  if (!existsSync(file)) return null;
  const bytes = readFileSync(file);
  rmSync(file, { force: true });
  return decode(bytes, token);
}

// ---- the file: magic, version, token, then sections (u32 LE frame length, u32 LE length uncompressed, zstd frame) ----
//
// Per-term data is binary, not JSON: at 10M series the `__name` dictionary alone has 10M terms,
// whose JSON would take minutes to write and approach V8's longest string. Term texts are
// concatenated (a category-only tag's key is NUL, so no separator would do); per term three
// u32: its posting list's offset and length in one array of every list, and its text's length.

/** Sections after the JSON document, in file order. */
const SECTIONS = 14;

function encode(image: IndexImage, token: Buffer): Uint8Array[] {
  const accounts = image.accounts.map((a) => [a.account, a.allAt, a.allLength, a.categories.map((c) => [c.category, c.spelling, c.terms])]);
  const structure = { size: image.size, checks: image.checks, more: image.activity.more, accounts, spellings: image.terms.spellings };
  const head = Buffer.alloc(4 + 4 + TOKEN_BYTES);
  MAGIC.copy(head, 0);
  head.writeUInt32LE(VERSION, 4);
  token.copy(head, 8);
  const { texts, spans, postings } = image.terms;
  const sections = [Buffer.from(JSON.stringify(structure)), image.storageIds, image.alive, image.typeBits, image.accountOf, image.checkOfId, image.nameStart, image.nameLength, image.names, image.activity.start, image.activity.end, texts, spans, postings];
  const out: Uint8Array[] = [head];
  for (const s of sections) {
    const packed = zstdCompressSync(Buffer.from(s.buffer, s.byteOffset, s.byteLength));
    const lengths = Buffer.alloc(SECTION_HEAD);
    lengths.writeUInt32LE(packed.byteLength, 0);
    lengths.writeUInt32LE(s.byteLength, 4);
    out.push(lengths, packed);
  }
  return out;
}

function decode(bytes: Buffer, token: Buffer): IndexImage | null {
  if (bytes.length < 8 + TOKEN_BYTES || !bytes.subarray(0, 4).equals(MAGIC)) return null;
  if (bytes.readUInt32LE(4) !== VERSION || !bytes.subarray(8, 8 + TOKEN_BYTES).equals(token)) return null;
  const sections: Buffer[] = [];
  for (let at = 8 + TOKEN_BYTES; at < bytes.length; ) {
    const len = bytes.readUInt32LE(at);
    const raw = bytes.readUInt32LE(at + 4);
    // One output piece of the section's size (zlib's minimum piece is 64 bytes).
    const section = zstdDecompressSync(bytes.subarray(at + SECTION_HEAD, at + SECTION_HEAD + len), { chunkSize: Math.max(64, raw) });
    if (section.byteLength !== raw) return null;
    sections.push(section);
    at += SECTION_HEAD + len;
  }
  if (sections.length !== SECTIONS) return null;
  // Read in place (MetricIndex.fromImage copies the columns into its own); a wider array whose
  // section does not start aligned for it is copied first.
  const u8 = (b: Buffer): Uint8Array => b;
  const aligned = (b: Buffer, width: number): Uint8Array => (b.byteOffset % width === 0 ? b : new Uint8Array(b));
  const u16 = (b: Buffer) => {
    const a = aligned(b, 2);
    return new Uint16Array(a.buffer, a.byteOffset, a.byteLength / 2);
  };
  const u32 = (b: Buffer) => {
    const a = aligned(b, 4);
    return new Uint32Array(a.buffer, a.byteOffset, a.byteLength / 4);
  };
  const [json, storageIds, alive, typeBits, accountOf, checkOfId, nameStart, nameLength, names, start, end, texts, spans, postings] = sections as Buffer[];
  const s = JSON.parse(json!.toString('utf8')) as {
    size: number;
    checks: [string, string, number][];
    more: [number, ActivityWindow[]][];
    accounts: [number, number, number, [string, string | null, number][]][];
    spellings: [number, string][];
  };
  return {
    size: s.size,
    storageIds: u8(storageIds!),
    alive: u8(alive!),
    typeBits: u8(typeBits!),
    accountOf: u32(accountOf!),
    checkOfId: u32(checkOfId!),
    nameStart: u32(nameStart!),
    nameLength: u16(nameLength!),
    names: u8(names!),
    checks: s.checks,
    activity: { start: u32(start!), end: u32(end!), more: s.more },
    accounts: s.accounts.map(([account, allAt, allLength, categories]) => ({
      account,
      allAt,
      allLength,
      categories: categories.map(([category, spelling, terms]) => ({ category, spelling, terms })),
    })),
    terms: { texts: u8(texts!), spans: u32(spans!), postings: u32(postings!), spellings: s.spellings },
  };
}
