// A bounds-checked FlatBuffers reader. The readers flatc generates trust the buffer; a
// client's body must not be trusted, so every offset, vtable, vector and string is checked
// against the buffer before it is read, and a violation is a MetricListFormatError naming
// what was wrong and where.

export class MetricListFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetricListFormatError';
  }
}

/** A table: its position and its vtable, both checked. */
export interface Table {
  pos: number;
  vtable: number;
  vtableLength: number;
  tableLength: number;
}

export interface Vector {
  /** Offset of the first element. */
  start: number;
  length: number;
}

export class SafeReader {
  private readonly view: DataView;
  private static readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(what: string, at: number): never {
    throw new MetricListFormatError(`${what} at byte ${at}`);
  }

  private need(at: number, size: number, what: string): void {
    if (at < 0 || at + size > this.bytes.length) this.fail(`${what} (${size} bytes) runs past the end of the ${this.bytes.length}-byte buffer`, at);
  }

  u8(at: number): number {
    this.need(at, 1, 'ubyte');
    return this.view.getUint8(at);
  }
  i8(at: number): number {
    this.need(at, 1, 'byte');
    return this.view.getInt8(at);
  }
  u16(at: number): number {
    this.need(at, 2, 'ushort');
    return this.view.getUint16(at, true);
  }
  i16(at: number): number {
    this.need(at, 2, 'short');
    return this.view.getInt16(at, true);
  }
  i32(at: number): number {
    this.need(at, 4, 'int');
    return this.view.getInt32(at, true);
  }
  u32(at: number): number {
    this.need(at, 4, 'uint');
    return this.view.getUint32(at, true);
  }
  i64(at: number): bigint {
    this.need(at, 8, 'long');
    return this.view.getBigInt64(at, true);
  }
  u64(at: number): bigint {
    this.need(at, 8, 'ulong');
    return this.view.getBigUint64(at, true);
  }
  /** A ulong as the nearest double, without allocating a BigInt (timestamps: one per sample). */
  u64Number(at: number): number {
    this.need(at, 8, 'ulong');
    return this.view.getUint32(at + 4, true) * 2 ** 32 + this.view.getUint32(at, true);
  }
  f64(at: number): number {
    this.need(at, 8, 'double');
    return this.view.getFloat64(at, true);
  }

  /** Follows the uoffset stored at `at`. */
  deref(at: number): number {
    const target = at + this.u32(at);
    this.need(target, 1, 'offset target');
    return target;
  }

  table(pos: number): Table {
    this.need(pos, 4, 'table');
    const vtable = pos - this.i32(pos);
    this.need(vtable, 4, 'vtable');
    const vtableLength = this.u16(vtable);
    const tableLength = this.u16(vtable + 2);
    if (vtableLength < 4 || vtableLength % 2 !== 0) this.fail(`vtable length ${vtableLength} is not an even number >= 4`, vtable);
    this.need(vtable, vtableLength, 'vtable');
    if (tableLength < 4) this.fail(`table length ${tableLength} is below 4`, vtable);
    this.need(pos, tableLength, 'table');
    return { pos, vtable, vtableLength, tableLength };
  }

  /** Absolute offset of field `slot`, or 0 when absent. */
  field(t: Table, slot: number, size: number): number {
    const entry = 4 + 2 * slot;
    if (entry >= t.vtableLength) return 0;
    const off = this.u16(t.vtable + entry);
    if (off === 0) return 0;
    if (off + size > t.tableLength) this.fail(`field ${slot} (${size} bytes at +${off}) lies outside its ${t.tableLength}-byte table`, t.pos);
    return t.pos + off;
  }

  subTable(t: Table, slot: number): Table | null {
    const at = this.field(t, slot, 4);
    return at === 0 ? null : this.table(this.deref(at));
  }

  vector(t: Table, slot: number, elementSize: number): Vector | null {
    const at = this.field(t, slot, 4);
    if (at === 0) return null;
    const target = this.deref(at);
    const length = this.u32(target);
    if (length * elementSize > this.bytes.length) this.fail(`vector of ${length} elements cannot fit in the buffer`, target);
    this.need(target + 4, length * elementSize, 'vector');
    return { start: target + 4, length };
  }

  /** Decoded strings by offset: builders share one string (a check name) among many metrics. */
  private readonly strings = new Map<number, string>();

  stringAt(target: number): string {
    const known = this.strings.get(target);
    if (known !== undefined) return known;
    const text = this.decodeString(target);
    this.strings.set(target, text);
    return text;
  }

  /** Where the bytes of the string at `target` start (its length is `u32(target)`), checked. */
  stringBytesAt(target: number): number {
    this.need(target + 4, this.u32(target) + 1, 'string (with its NUL)');
    return target + 4;
  }

  private decodeString(target: number): string {
    const length = this.u32(target);
    this.need(target + 4, length + 1, 'string (with its NUL)');
    try {
      return SafeReader.decoder.decode(this.bytes.subarray(target + 4, target + 4 + length));
    } catch {
      return this.fail('string is not valid UTF-8', target);
    }
  }

  string(t: Table, slot: number): string | null {
    const at = this.field(t, slot, 4);
    return at === 0 ? null : this.stringAt(this.deref(at));
  }

  bytesOf(v: Vector): Uint8Array {
    return this.bytes.subarray(v.start, v.start + v.length);
  }
}
