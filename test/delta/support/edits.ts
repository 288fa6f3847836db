import fc from 'fast-check'
import { randomBytes } from '../../support/random.js'
import { concat } from './roundtrip.js'

/** One edit of a byte string, at positions given as fractions of its length. */
export type Edit =
  | { kind: 'insert' | 'overwrite' | 'delete' | 'move' | 'duplicate' | 'truncate' | 'append'; at: number; to: number; len: number; seed: number }

/** Applies one edit; positions are fractions of the current length so any edit fits any file. */
export function applyEdit(b: Uint8Array, e: Edit): Uint8Array {
  const at = Math.floor(e.at * b.length)
  const len = Math.min(e.len, b.length - at)
  const fresh = randomBytes(e.seed, e.len)
  switch (e.kind) {
    case 'insert':
      return concat([b.subarray(0, at), fresh, b.subarray(at)])
    case 'overwrite':
      return concat([b.subarray(0, at), fresh.subarray(0, len), b.subarray(at + len)])
    case 'delete':
      return concat([b.subarray(0, at), b.subarray(at + len)])
    case 'truncate':
      return b.slice(0, at)
    case 'append':
      return concat([b, fresh])
    case 'move':
    case 'duplicate': {
      const piece = b.slice(at, at + len)
      const rest = e.kind === 'move' ? concat([b.subarray(0, at), b.subarray(at + len)]) : b
      const to = Math.floor(e.to * rest.length)
      return concat([rest.subarray(0, to), piece, rest.subarray(to)])
    }
  }
}

export const editArb: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('insert', 'overwrite', 'delete', 'move', 'duplicate', 'truncate', 'append'),
  at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  to: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  len: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 5000 })),
  seed: fc.integer({ min: 1, max: 1 << 30 }),
})

