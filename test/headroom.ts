import t from 'tap'
import { allocWithHeadroom, HEADROOM_BYTES, POOLED_BYTES, pooledCount, prependInPlace, recycleSent } from '../src/headroom.js'
import { READ_BUFFER_BYTES } from '../src/fs/file-source.js'

t.test('prependInPlace writes the prefix into the room before a buffer made with it, once', async (t) => {
  const bytes = allocWithHeadroom(1000).fill(9)
  const out = prependInPlace(Uint8Array.of(1, 2, 3), bytes)
  t.ok(out !== undefined)
  t.equal(out!.buffer, bytes.buffer, 'a view, not a copy')
  t.same([...out!.subarray(0, 3)], [1, 2, 3])
  t.equal(out!.length, 1003)
  t.ok(out!.subarray(3).every((b) => b === 9), 'the bytes after it untouched')
  t.equal(prependInPlace(Uint8Array.of(4), bytes), undefined, 'the room is used once')
  t.same([...out!.subarray(0, 3)], [1, 2, 3], 'the first prefix stays')
})

t.test('no room: another buffer, a view further in, a prefix longer than the room', async (t) => {
  t.equal(prependInPlace(Uint8Array.of(1), Buffer.allocUnsafe(100)), undefined, 'a buffer not made here (maybe from the shared pool)')
  t.equal(prependInPlace(Uint8Array.of(1), new Uint8Array(100)), undefined)
  const bytes = allocWithHeadroom(100)
  t.equal(prependInPlace(Uint8Array.of(1), bytes.subarray(1)), undefined, 'not where the buffer was handed out')
  t.equal(prependInPlace(new Uint8Array(HEADROOM_BYTES + 1), bytes), undefined, 'longer than the room')
  t.ok(prependInPlace(new Uint8Array(HEADROOM_BYTES), bytes) !== undefined, 'exactly the room fits')
})

t.test('recycleSent: a pooled buffer whose whole read went as one message comes back from the pool, once', async (t) => {
  const read = allocWithHeadroom(POOLED_BYTES).fill(5)
  const frame = prependInPlace(Uint8Array.of(1, 2), read)!
  const before = pooledCount()
  recycleSent(frame)
  t.equal(pooledCount(), before + 1, 'kept for reuse')
  recycleSent(frame)
  t.equal(pooledCount(), before + 1, 'twice is still once')
  const again = allocWithHeadroom(POOLED_BYTES)
  t.equal(again.buffer, read.buffer, 'handed out again')
  t.equal(pooledCount(), before)
  const next = prependInPlace(Uint8Array.of(3, 4), again)
  t.ok(next !== undefined, 'with its room free again')
  recycleSent(frame)
  t.equal(pooledCount(), before, 'the old message, written long ago, does not free it under the new one')
  recycleSent(next!)
  t.equal(pooledCount(), before + 1, 'the new one does, once written')
  allocWithHeadroom(POOLED_BYTES)
})

t.test('recycleSent keeps nothing that may still be read', async (t) => {
  const before = pooledCount()
  const small = allocWithHeadroom(1000)
  recycleSent(prependInPlace(Uint8Array.of(1), small)!)
  t.equal(pooledCount(), before, 'not the pooled size')
  const part = allocWithHeadroom(POOLED_BYTES)
  recycleSent(prependInPlace(Uint8Array.of(1), part.subarray(0, 1000))!)
  t.equal(pooledCount(), before, 'a message of part of the read: the rest may be in another')
  const unsent = allocWithHeadroom(POOLED_BYTES)
  recycleSent(unsent)
  recycleSent(new Uint8Array(unsent.buffer, 0, unsent.buffer.byteLength))
  t.equal(pooledCount(), before, 'no message was made of it in place')
  recycleSent(Buffer.allocUnsafe(POOLED_BYTES + HEADROOM_BYTES))
  t.equal(pooledCount(), before, 'a buffer not made here')
  // The pool is bounded: sends of many buffers keep at most a few.
  for (let i = 0; i < 50; i++) recycleSent(prependInPlace(Uint8Array.of(1), allocWithHeadroom(POOLED_BYTES))!)
  t.ok(pooledCount() <= 8, `${pooledCount()} kept`)
  t.equal(POOLED_BYTES, READ_BUFFER_BYTES, 'the pool holds a file source\'s full reads')
})
