// Buffers with free bytes before their contents, so a header can be written in front of them
// without copying: a request body is read once, into memory with room for its journal entry's
// header (model/journal-entry.ts), and journaled where it lies. Only buffers made here (or handed
// back by a parse worker, which keeps the bytes where they were) are known to own that room; any
// other buffer, a slice of Node's shared pool say, has none.

const roomy = new WeakSet<ArrayBufferLike>();

/** `length` bytes of fresh memory with `headroom` free bytes in front of them. */
export function allocWithHeadroom(headroom: number, length: number): Buffer {
  const whole = Buffer.allocUnsafeSlow(headroom + length);
  roomy.add(whole.buffer);
  return whole.subarray(headroom);
}

/** Free bytes in front of `bytes` that may be written (0 unless it was made with room). */
export function headroomOf(bytes: Uint8Array): number {
  return roomy.has(bytes.buffer) ? bytes.byteOffset : 0;
}

/** True when `bytes` is the whole of its memory after any headroom: it may be transferred to another thread. */
export function ownsItsMemory(bytes: Uint8Array): boolean {
  const whole = bytes.byteOffset === 0 || roomy.has(bytes.buffer);
  return whole && bytes.byteOffset + bytes.byteLength === bytes.buffer.byteLength;
}

/**
 * `bytes` as it came back from a thread it was transferred to (the memory is the same, its
 * ArrayBuffer a new object): `room`, its headroom when sent, is known to be free again.
 */
export function returned(bytes: Uint8Array, room: number): Buffer {
  const back = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (room > 0 && back.byteOffset === room) roomy.add(back.buffer);
  return back;
}
