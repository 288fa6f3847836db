/**
 * What the delta alone costs for each changed file of a class, in one process (no sync
 * protocol around it): one round as sync sends it today (blockSizeForChange) and a refined
 * exchange (blockSizeForRefinement, then refinement rounds: test/delta/support/refined.ts), both
 * with the changed-region count the receiver takes from the CDC chunk lists (as sync does: a
 * list of over 256 chunks arrives sampled and the count is scaled, receiver.ts), so that "one
 * round" is what sync's own signature and delta cost. Unchanged renames are skipped: sync
 * copies them locally.
 */
import { chunkBytes, cutterFor, DEFAULT_CHUNK_PARAMS } from '../../src/chunk/index.js'
import { blockSizeForChange, changedRegions } from '../../src/delta/index.js'
import { profile } from '../../src/similarity/index.js'
import { sampleChunks } from '../../src/store/index.js'
import { refinedExchange } from '../../test/delta/support/refined.js'
import { equalBytes, makeDelta, patchBytes } from '../../test/delta/support/roundtrip.js'
import type { Tree } from './sync-data.js'

export interface Projection {
  /** Signature + delta bytes of one round, summed over the changed files with a basis. */
  readonly oneRound: number
  /** Every message of the refined exchange, summed likewise. */
  readonly refined: number
  /** Refinement rounds of the largest file (0: nothing to refine). */
  readonly rounds: number
  /** CPU ms of the refined exchanges, and of one round (signature, delta, every round, patch:
   *  both sides, in this process). */
  readonly refinedCpuMs: number
  readonly oneRoundCpuMs: number
}

const cpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

export async function project(before: Tree, after: Tree, basis: ReadonlyMap<string, string | null>): Promise<Projection> {
  const cutter = cutterFor(DEFAULT_CHUNK_PARAMS)
  let oneRound = 0
  let refined = 0
  let rounds = 0
  let biggest = -1
  let oneRoundCpuMs = 0
  let refinedCpuMs = 0
  for (const [to, from] of basis) {
    if (from === null) continue
    const seed = before.get(from)!
    const target = after.get(to)!
    if (equalBytes(seed, target)) continue // a rename: sync copies it locally, no delta
    const [tc, sc] = [chunkBytes(target, cutter), chunkBytes(seed, cutter)]
    // sender.ts SAMPLE_ABOVE_CHUNKS; receiver.ts scales a sample's count by size ÷ sampled bytes.
    const sampled = tc.length > 256
    const tp = profile(sampled ? sampleChunks(tc) : tc)
    const scale = sampled && tp.multiset.total > 0 ? target.length / tp.multiset.total : 1
    const regions = changedRegions(tp, profile(sampled ? sampleChunks(sc) : sc), scale)
    let t0 = cpuMs()
    const one = await makeDelta(seed, target, { blockSize: blockSizeForChange(seed.length, regions) })
    await patchBytes(seed, one.delta) // the refined exchange's CPU includes its patch too
    oneRoundCpuMs += cpuMs() - t0
    oneRound += one.sigBytes.length + one.delta.length
    t0 = cpuMs()
    const x = await refinedExchange(seed, target, { regions })
    refinedCpuMs += cpuMs() - t0
    if (!equalBytes(x.rebuilt, target)) throw new Error(`${to}: the refined exchange did not rebuild it`)
    refined += x.total
    if (target.length > biggest) {
      biggest = target.length
      rounds = x.rounds.filter((r) => r.refine > 0).length
    }
  }
  return { oneRound, refined, rounds, refinedCpuMs, oneRoundCpuMs }
}
