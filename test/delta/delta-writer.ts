import t from 'tap'
import fc from 'fast-check'
import { DeltaWriter } from '../../src/delta/delta-writer.js'
import { LITERAL_FRAME_BYTES } from '../../src/delta/delta-format.js'
import { digestBytes } from '../../src/hash/index.js'
import { randomBytes } from '../support/random.js'

/** Ops: a copy (seed offset, length) or literal bytes. */
type Op = { copy: [number, number] } | { literal: Uint8Array }

function write(ops: readonly Op[], literalHint: number | undefined): Buffer {
  const w = new DeltaWriter(1 << 20, literalHint === undefined ? {} : { literalHint })
  let size = 0
  for (const op of ops) {
    if ('copy' in op) {
      w.copy(op.copy[0], op.copy[1])
      size += op.copy[1]
    } else {
      w.literal(op.literal)
      size += op.literal.length
    }
  }
  w.finish(size, digestBytes(new Uint8Array(0)))
  return Buffer.concat(w.take())
}

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ copy: fc.tuple(fc.nat(1 << 20), fc.integer({ min: 1, max: 1 << 16 })) }),
  // Text-like literals (they compress) and random ones, up to past a frame's first size.
  fc.record({ literal: fc.oneof(fc.uint8Array({ maxLength: 20_000 }), fc.string({ maxLength: 20_000 }).map((s) => new TextEncoder().encode(s))) }),
)

t.test('a DeltaWriter writes the same delta whatever literalHint it is given (property)', async () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 12 }), fc.oneof(fc.constant(0), fc.nat(40_000)), (ops, hint) => write(ops, hint).equals(write(ops, undefined))),
    { numRuns: 150 },
  )
})

t.test('a hint far below the literals still frames them as without one', async (t) => {
  // More than one whole frame of compressible and of random literals, with a hint of 1 byte.
  const text = new TextEncoder().encode('the quick brown fox jumps over the lazy dog. '.repeat(Math.ceil((LITERAL_FRAME_BYTES * 1.5) / 45)))
  const ops: Op[] = [{ literal: text }, { copy: [100, 5000] }, { literal: randomBytes(7, LITERAL_FRAME_BYTES + 3) }]
  t.ok(write(ops, 1).equals(write(ops, undefined)))
})
