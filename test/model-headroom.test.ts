// model/headroom.ts: which buffers own the bytes in front of them, which may be transferred to
// another thread whole, and that a buffer handed back from a thread keeps its room.
import test from 'ava';
import { MessageChannel } from 'node:worker_threads';
import { allocWithHeadroom, headroomOf, ownsItsMemory, returned } from '../model/headroom.js';

test('a buffer made with room owns it, and its memory whole; a slice of another has none', (t) => {
  const roomy = allocWithHeadroom(22, 100);
  t.is(roomy.length, 100);
  t.is(headroomOf(roomy), 22);
  t.true(ownsItsMemory(roomy));
  t.false(ownsItsMemory(roomy.subarray(0, 50)), 'not when bytes follow it');
  const plain = Buffer.alloc(200).subarray(22, 122);
  t.is(headroomOf(plain), 0);
  t.false(ownsItsMemory(plain));
  t.true(ownsItsMemory(new Uint8Array(10)));
  t.is(headroomOf(new Uint8Array(10)), 0);
});

test('a buffer back from a thread keeps the room it was sent with, and only that', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const roomy = allocWithHeadroom(22, 8);
  roomy.fill(7);
  const room = headroomOf(roomy);
  const echoed = new Promise<Uint8Array>((resolve) => {
    port2.on('message', (bytes: Uint8Array) => port2.postMessage(bytes, [bytes.buffer as ArrayBuffer]));
    port1.on('message', (bytes: Uint8Array) => resolve(bytes));
  });
  port1.postMessage(roomy, [roomy.buffer as ArrayBuffer]);
  const back = returned(await echoed, room);
  port1.close();
  port2.close();
  t.is(headroomOf(back), 22);
  t.deepEqual([...back], new Array(8).fill(7));
  t.is(headroomOf(returned(Buffer.alloc(8), 0)), 0, 'nothing claimed for a buffer sent without room');
});
