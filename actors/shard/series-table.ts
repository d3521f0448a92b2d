// The shard's series: one MetricInfo per metric it has taken samples of, built from the
// WireMetric the node sends, so per-metric state (index id, whether anything is sealed yet,
// open buffers) belongs to the shard alone. Reads of a metric not taken here get a description
// that is not remembered.
//
// A shard holds a million of these (issue 30), so none is kept as an object: a metric is a row
// of the table's typed columns (index id, open buffer, activity slice, sealed or not, partition,
// check), and a `ShardMetric` is a view of one row (its table and row number), made when asked
// and dropped after. Whoever keeps a metric keeps its row (open buffers do). Its storage id's
// bytes sit in the table's IdTable, which finds it by them (`id` is a view of them and `idHex`
// their hex, made when asked); its canonical name is the text the node sent until the index
// holds it, then the index's (one copy per series, in the index's name arena, not a string per
// series here).
import { CheckTable, type MetricCheck } from '../../model/metric-check.js';
import { metricKey } from '../../model/metric-key.js';
import { canonicalText, newMetricInfo, type MetricInfo, type MetricRef, type ReadMetric, type WireMetric } from '../../model/metric-info.js';
import { canonicalizeMetricName, splitCanonical, type CanonicalName } from '../../model/metric-name.js';
import { IdTable } from '../../model/id-table.js';
import { grown, roomFor, withRoom } from '../../model/typed-arrays.js';
import { METRIC_ID_BYTES } from '../../storage/keys.js';
import type { AccountId, MetricKey } from '../../model/types.js';
import { PendingNames } from './pending-names.js';

/** Rows a table has room for before its columns first double. */
const ROWS_AT_FIRST = 1024;
const NOT_ADOPTED = -1;

/** The canonical name of a metric the index holds (pending or stored), by storage id; null when it holds none. */
export type IndexedNames = (storageId: Buffer) => string | null;

/** A view of one row of a series table (see the file comment); equal rows are the same metric. */
export class ShardMetric implements MetricInfo {
  constructor(
    private readonly table: SeriesTable,
    readonly row: number,
  ) {}

  get indexId(): number {
    return this.table.indexIds[this.row]!;
  }

  set indexId(id: number) {
    this.table.indexIds[this.row] = id;
  }

  get unsealed(): boolean {
    return this.table.unsealed[this.row] === 1;
  }

  set unsealed(value: boolean) {
    this.table.unsealed[this.row] = value ? 1 : 0;
  }

  get openHead(): number {
    return this.table.openHeads[this.row]!;
  }

  set openHead(head: number) {
    this.table.openHeads[this.row] = head;
  }

  get lastSlice(): number {
    return this.table.lastSlices[this.row]!;
  }

  set lastSlice(slice: number) {
    this.table.lastSlices[this.row] = slice;
  }

  get newestSealedS(): number {
    return this.table.newestSealedS[this.row]!;
  }

  set newestSealedS(seconds: number) {
    this.table.newestSealedS[this.row] = seconds;
  }

  get partition(): number {
    return this.table.partitions[this.row]!;
  }

  private get check(): MetricCheck {
    return this.table.checkOf(this.row);
  }

  get accountId(): AccountId {
    return this.check.accountId;
  }

  get uuid(): string {
    return this.check.uuid;
  }

  get checkName(): string {
    return this.check.checkName;
  }

  /** The 16-byte storage id: a view of the table's arena (no copy, no hex decoding). */
  get id(): Buffer {
    return this.table.idOf(this.row);
  }

  get idHex(): string {
    return this.id.toString('hex');
  }

  get canonical(): string {
    return this.table.canonicalOf(this.row);
  }

  /** The canonical name's UTF-8 bytes while they are the declaration's (see MetricIndex `assign`). */
  get canonicalBytes(): Uint8Array | undefined {
    return this.table.canonicalBytesOf(this.row);
  }

  get key(): MetricKey {
    return metricKey(this.uuid, this.canonical);
  }

  get name(): CanonicalName {
    return this.table.nameOf(this.row);
  }

  /** The index has the name: the table lets go of the pending copy. */
  indexed(): void {
    this.table.indexed(this.row);
  }
}

export class SeriesTable {
  /** Storage ids, numbered. */
  private readonly ids = new IdTable();
  /** By storage id number: the adopted metric's row, NOT_ADOPTED before its first sample and once forgotten. */
  private rowOf = new Int32Array(ROWS_AT_FIRST).fill(NOT_ADOPTED);
  private adopted = 0;
  /**
   * The canonical name as the node sent it, by row, until the index has it (`indexed`, as soon as
   * the shard stages the metric there: a batch's new names at most). Text, not parsed.
   */
  private readonly pending = new PendingNames();
  /**
   * The canonical names of forgotten metrics, by row: the index lets go of them, and whoever still
   * holds such a metric may ask. (One text per full delete while the process runs, as the id table
   * keeps one id.)
   */
  private readonly forgotten = new Map<number, string>();
  /** Checks, kept once (a series table holds millions of metrics, a check's many). */
  private readonly checks = new CheckTable();
  /** A hex id's bytes, decoded for a lookup. */
  private readonly scratch = Buffer.alloc(METRIC_ID_BYTES);
  /**
   * Rows taken: one per adoption. A metric forgotten and adopted again gets a new row, so one
   * who still holds the forgotten one reads its state as it was, not the new one's.
   */
  private rows = 0;
  // ShardMetric's columns, by row (see the file comment).
  /** The storage id's number in `ids`. */
  private idNumbers = new Int32Array(ROWS_AT_FIRST);
  private checkNumbers = new Uint32Array(ROWS_AT_FIRST);
  partitions = new Uint32Array(ROWS_AT_FIRST);
  indexIds = new Int32Array(ROWS_AT_FIRST);
  openHeads = new Int32Array(ROWS_AT_FIRST);
  lastSlices = new Int32Array(ROWS_AT_FIRST);
  /** 1 while the metric is known to have no sealed block. */
  unsealed = new Uint8Array(ROWS_AT_FIRST);
  /** MetricInfo.newestSealedS: whole seconds fit 32 bits until 2106, and windows are ≥ 1 s apart. */
  newestSealedS = new Uint32Array(ROWS_AT_FIRST);

  /** `names`: the shard's index, which holds the names of the metrics once they are indexed. */
  constructor(private readonly names: IndexedNames) {}

  get size(): number {
    return this.adopted;
  }

  /**
   * The shard's MetricInfo of a metric it takes samples of (its row made at its first sample);
   * `id`: its storage id's bytes, when the sender has them (a parse lane's declarations).
   */
  adopt(m: WireMetric & { id?: Uint8Array; canonicalBytes?: Uint8Array }): ShardMetric {
    const id = m.id ?? this.idBytes(m.idHex);
    const n = this.ids.numberOf(id);
    this.rowOf = withRoom(this.rowOf, n + 1, NOT_ADOPTED);
    let row = this.rowOf[n]!;
    if (row === NOT_ADOPTED) {
      row = this.rowOf[n] = this.newRow(n, m);
      this.pending.set(row, m.canonicalBytes ?? canonicalText(m));
      this.adopted++;
    }
    return this.metricAt(row);
  }

  /** The metric of `row` (a row someone kept). */
  metricAt(row: number): ShardMetric {
    return new ShardMetric(this, row);
  }

  private newRow(idNumber: number, m: WireMetric): number {
    const row = this.rows++;
    if (row === this.idNumbers.length) this.growRows(roomFor(row, row + 1));
    this.idNumbers[row] = idNumber;
    this.checkNumbers[row] = this.checks.numberOf(m.accountId, m.uuid, m.checkName);
    this.partitions[row] = m.partition;
    // Set here, not by filling the columns' new room: room filled is room resident.
    this.indexIds[row] = -1;
    this.openHeads[row] = -1;
    this.lastSlices[row] = -1;
    return row;
  }

  private growRows(n: number): void {
    this.idNumbers = grown(this.idNumbers, n);
    this.checkNumbers = grown(this.checkNumbers, n);
    this.partitions = grown(this.partitions, n);
    this.indexIds = grown(this.indexIds, n);
    this.openHeads = grown(this.openHeads, n);
    this.lastSlices = grown(this.lastSlices, n);
    this.unsealed = grown(this.unsealed, n);
    this.newestSealedS = grown(this.newestSealedS, n);
  }

  /** The metric a read or delete names: the adopted one when there is one. */
  resolve(m: WireMetric): MetricInfo {
    return this.find(m.idHex) ?? newMetricInfo(m, Buffer.from(m.idHex, 'hex'), m.idHex, m.partition);
  }

  /**
   * What a read of the metric finds its data by: the adopted metric, or, for one this process has
   * taken no sample of, its storage id alone (no open buffer; its sealed blocks are looked for).
   */
  ref(m: ReadMetric): MetricRef {
    return this.find(m.idHex) ?? { id: Buffer.from(m.idHex, 'hex'), idHex: m.idHex, unsealed: false, openHead: -1 };
  }

  /** The adopted metric with this storage id, if any. */
  find(idHex: string): ShardMetric | undefined {
    const row = this.adoptedRow(idHex);
    return row === NOT_ADOPTED ? undefined : this.metricAt(row);
  }

  /**
   * Forgets a fully deleted metric (before the index does): data written later starts a fresh one,
   * in a new row. The old row keeps its state and name for whoever still holds it.
   */
  forget(idHex: string): void {
    const row = this.adoptedRow(idHex);
    if (row === NOT_ADOPTED) return;
    this.forgotten.set(row, this.canonicalOf(row));
    this.pending.delete(row);
    this.rowOf[this.idNumbers[row]!] = NOT_ADOPTED;
    this.adopted--;
  }

  /** The index has the name of the metric in `row`: the pending copy goes. */
  indexed(row: number): void {
    this.pending.delete(row);
  }

  /** The storage id of the metric in `row`: a view of the table's arena. */
  idOf(row: number): Buffer {
    return this.ids.view(this.idNumbers[row]!);
  }

  checkOf(row: number): MetricCheck {
    return this.checks.at(this.checkNumbers[row]!);
  }

  /** The canonical name of the metric in `row`: pending, forgotten, or the index's. */
  canonicalOf(row: number): string {
    const own = this.pending.get(row) ?? this.forgotten.get(row);
    if (own !== undefined) return typeof own === 'string' ? own : Buffer.from(own.buffer, own.byteOffset, own.byteLength).toString('utf8');
    const name = this.names(this.idOf(row));
    if (name === null) throw new Error(`BUG: metric ${this.idOf(row).toString('hex')} was let go of its name but the index does not hold it`);
    return name;
  }

  /** The pending name's UTF-8 bytes, when it was declared as bytes (the index copies them as they are). */
  canonicalBytesOf(row: number): Uint8Array | undefined {
    const pending = this.pending.get(row);
    return typeof pending === 'string' ? undefined : pending;
  }

  nameOf(row: number): CanonicalName {
    // A pending name is canonical as the node sent it; one the index holds was checked when stored.
    if (this.pending.get(row) !== undefined) return splitCanonical(this.canonicalOf(row));
    const canonical = this.canonicalOf(row);
    const parsed = canonicalizeMetricName(canonical);
    if (!parsed.ok) throw new Error(`BUG: stored canonical name ${JSON.stringify(canonical)} does not parse: ${parsed.reason}`);
    return parsed.value;
  }

  /** The row of the adopted metric with this storage id, or NOT_ADOPTED. */
  private adoptedRow(idHex: string): number {
    const n = this.numberOf(idHex);
    return n < 0 || n >= this.rowOf.length ? NOT_ADOPTED : this.rowOf[n]!;
  }

  /** The number of a hex storage id, or -1. */
  private numberOf(idHex: string): number {
    return this.ids.find(this.idBytes(idHex));
  }

  /** A hex storage id's bytes, decoded into `scratch`. */
  private idBytes(idHex: string): Buffer {
    if (this.scratch.write(idHex, 0, 'hex') !== METRIC_ID_BYTES) throw new Error(`BUG: storage id ${JSON.stringify(idHex)} is not 16 bytes of hex`);
    return this.scratch;
  }
}
