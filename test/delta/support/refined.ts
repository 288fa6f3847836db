import {
  applyDelta,
  blockSizeForRefinement,
  computeRefineSignature,
  computeSignature,
  decodeMatches,
  decodeRefineSignature,
  decodeSignature,
  encodeMatchedDelta,
  encodeMatches,
  encodeRefineSignature,
  encodeSignature,
  matchTarget,
  planRefinement,
  refineMatches,
} from '../../../src/delta/index.js'
import { collect, splitStream } from '../../support/random.js'
import { concat, memorySeed } from './roundtrip.js'

/** Bytes each message of a refined exchange put on the wire. */
export interface RefinedWire {
  readonly signature: number
  /** Per round after the first: [match list, refinement signature]; the last list has no signature. */
  readonly rounds: { matches: number; refine: number; blockSize: number }[]
  readonly delta: number
  readonly total: number
  readonly literalBytes: number
  readonly rebuilt: Uint8Array
}

/**
 * A whole refined exchange in one process, every message through its byte encoding as the wire
 * would carry it: signature → match list → refinement signature → … → final delta, then the
 * patch. `regions` sizes round 1 (blockSizeForRefinement) unless `blockSize` is given.
 */
export async function refinedExchange(seed: Uint8Array, target: Uint8Array, o: { regions?: number; blockSize?: number; maxRounds?: number } = {}): Promise<RefinedWire> {
  const b1 = o.blockSize ?? blockSizeForRefinement(seed.length, o.regions ?? 1)
  const sigBytes = encodeSignature(await computeSignature(splitStream(seed, [65536]), { size: seed.length, blockSize: b1 }))
  let { list, digest } = await matchTarget(decodeSignature(sigBytes), splitStream(target, [65536]))
  const rounds: RefinedWire['rounds'] = []
  let prevBlock = b1
  for (let r = 0; r < (o.maxRounds ?? 4); r++) {
    const report = encodeMatches(list)
    const theirs = decodeMatches(report)
    const plan = planRefinement(theirs, prevBlock)
    if (plan === null) {
      rounds.push({ matches: report.length, refine: 0, blockSize: 0 })
      break
    }
    const rb = encodeRefineSignature(await computeRefineSignature(memorySeed(seed), theirs, plan))
    rounds.push({ matches: report.length, refine: rb.length, blockSize: plan.blockSize })
    list = await refineMatches(list, decodeRefineSignature(rb, list), memorySeed(target))
    prevBlock = plan.blockSize
  }
  const d = encodeMatchedDelta(list, memorySeed(target), digest)
  const delta = concat(await collect(d.bytes))
  const out: Uint8Array[] = []
  await applyDelta(memorySeed(seed), splitStream(delta, [4096]), { write: async (b) => void out.push(b.slice()) })
  const wire = rounds.reduce((n, r) => n + r.matches + r.refine, sigBytes.length + delta.length)
  return { signature: sigBytes.length, rounds, delta: delta.length, total: wire, literalBytes: d.stats().literalBytes, rebuilt: concat(out) }
}
