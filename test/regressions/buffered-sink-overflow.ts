import t from 'tap'
import { DeltaWriter } from '../../src/delta/delta-writer.js'
import { digestBytes } from '../../src/hash/index.js'
import { randomBytes } from '../support/random.js'
import { concat, equalBytes, patchBytes } from '../delta/support/roundtrip.js'

// Issue 7, item 2: copies of 300,000, 300,000 and 450,000 bytes grew the write buffer to its
// 1 MiB cap and then overflowed it (RangeError: offset is out of bounds), crashing the receiver.
t.test('copies of 300,000 + 300,000 + 450,000 bytes rebuild the target', async (t) => {
  const seed = randomBytes(7, 3_000_000)
  const pieces: [number, number][] = [[0, 300_000], [1_000_000, 300_000], [2_000_000, 450_000], [100, 500_000]]
  const target = concat(pieces.map(([o, n]) => seed.subarray(o, o + n)))
  const w = new DeltaWriter(seed.length)
  for (const [o, n] of pieces) w.copy(o, n)
  w.finish(target.length, digestBytes(target))
  const rebuilt = await patchBytes(seed, concat(w.take()))
  t.ok(equalBytes(rebuilt, target), 'the rebuilt file equals the target')
})
