import t from 'tap'
import { allocWithHeadroom, HEADROOM_BYTES, prependInPlace } from '../src/headroom.js'

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
