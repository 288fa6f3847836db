import type { Chunk, Fingerprint } from '../types.js'

/**
 * The content index keeps a chunk fingerprint when its first byte mod SAMPLE_MODULUS is 0 (the
 * sif rule, on chunk fingerprints instead of 50-byte windows): a content-defined choice, so two
 * files that share a chunk both index it or both don't, and a query needs only the target's
 * sampled fingerprints. Each file also indexes its MIN_HASHES smallest fingerprints (min-hash,
 * ordered by their last 8 bytes, independent of the byte the modulus reads), so files of a few
 * chunks are indexed whole and stay findable.
 *
 * Measured (default 8 KiB CDC; seeded random files; the target is the source with 3, 5 or 7 of
 * its tenths overwritten; "found" = the source shares an indexed fingerprint with the target's
 * sampled ones; 150 trials each). Index entries per chunk, and found at 70% / 50% kept:
 *
 *   file size   full index (S=1)        S=4,K=0            S=8,K=4 (chosen)    S=8,K=8
 *   16 KiB      1.00  0.42 / 0.22       0.22 0.05 / 0.05   1.00 0.44 / 0.24    1.00 0.42 / 0.24
 *   64 KiB      1.00  0.96 / 0.93       0.24 0.59 / 0.44   0.59 0.90 / 0.78    0.99 0.97 / 0.90
 *   256 KiB     1.00  1.00 / 1.00       0.25 0.99 / 0.97   0.25 1.00 / 0.95    0.37 1.00 / 1.00
 *   1 MiB       1.00  1.00 / 1.00       0.25 1.00 / 1.00   ~0.16 (S=8,K=2: 1.00 / 1.00)
 *
 * (At 16 KiB even the full index misses half: three edits in two chunks leave little to share.)
 * S=8,K=4 matches the full index below 64 KiB, trails it by 6 points (70% kept) to 15 (50%
 * kept) at 64 KiB and by at most 5 from 256 KiB up, with a sixth to a quarter of its entries on
 * large files. S=8,K=8 would close the 64 KiB gap for +60% entries there; K=4 was preferred since
 * a seed found in time still has to pass the 50% similarity rule to be used, and seeds by path
 * and exact copies by digest do not depend on sampling at all.
 */
export const SAMPLE_MODULUS = 8

/** Smallest fingerprints every file indexes whatever the modulus says (see SAMPLE_MODULUS). */
export const MIN_HASHES = 4

/** True when `fp` passes the modulus rule. */
export function passesSample(fp: Fingerprint): boolean {
  return Number.parseInt(fp.slice(0, 2), 16) % SAMPLE_MODULUS === 0
}

/** The min-hash key of a fingerprint: its last 8 bytes as hex (fixed width, so string order works). */
function minKey(fp: Fingerprint): string {
  return fp.slice(16)
}

/** Orders fingerprints by their min-hash key, smallest first. */
function byMinKey(a: Fingerprint, b: Fingerprint): number {
  return minKey(a) < minKey(b) ? -1 : minKey(a) > minKey(b) ? 1 : 0
}

/**
 * The fingerprints of a chunk list that go into (or are looked up in) the content index:
 * those passing the modulus rule plus the MIN_HASHES smallest, each once, in first-seen order.
 * Deterministic in the chunk list, so put and delete see the same set.
 */
export function sampleFingerprints(chunks: readonly Chunk[]): Fingerprint[] {
  const out = new Set<Fingerprint>()
  const smallest: Fingerprint[] = []
  for (const { fp } of chunks) {
    if (passesSample(fp)) out.add(fp)
    if (smallest.includes(fp)) continue
    if (smallest.length < MIN_HASHES) smallest.push(fp)
    else if (minKey(fp) < minKey(smallest[MIN_HASHES - 1]!)) smallest[MIN_HASHES - 1] = fp
    else continue
    smallest.sort(byMinKey)
  }
  for (const fp of smallest) out.add(fp)
  return [...out]
}

/**
 * A few fingerprints of a chunk list that the content index holds for any file sharing their
 * chunk: those passing the modulus rule, the `count` smallest by their last 8 bytes (a bottom-k
 * sample, so two files sharing much content pick many of the same); when fewer pass, the file's
 * smallest ones fill up (indexed too, but found only when they are also the other file's
 * smallest). What a receiver looks up before asking for a new file's chunk list (PROTOCOL.md
 * §4.6): a file sharing half its chunks with one here shares none of 8 such keys with
 * probability 1/256, and a seed must share about half to be used (the 50% rule).
 */
export function probeFingerprints(chunks: readonly Chunk[], count: number): Fingerprint[] {
  const all = [...new Set(chunks.map((c) => c.fp))].sort(byMinKey)
  const chosen = all.filter(passesSample).slice(0, count)
  for (const fp of all) {
    if (chosen.length >= count) break
    if (!chosen.includes(fp)) chosen.push(fp)
  }
  return chosen
}

/**
 * The chunks of a list whose fingerprints `sampleFingerprints` picks, in order (offsets kept):
 * what sync sends of a large file's chunk list. Seed choice, similarity and the content index
 * only ever need the sampled fingerprints, so for a 30 MiB file this is ~10 KiB instead of
 * ~77 KiB; both sides sample the same way, so shared content is sampled in both.
 */
export function sampleChunks(chunks: readonly Chunk[]): Chunk[] {
  const keep = new Set(sampleFingerprints(chunks))
  return chunks.filter((c) => keep.has(c.fp))
}
