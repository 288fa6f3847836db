import type { Chunk, Fingerprint } from '../types.js'

/**
 * The content index keeps a chunk fingerprint when its first byte mod SAMPLE_MODULUS is 0 (the
 * sif rule, on chunk fingerprints instead of 50-byte windows): a content-defined choice, so two
 * files that share a chunk both index it or both don't, and a query needs only the target's
 * sampled fingerprints. Figures: see MEASURED_SAMPLING below.
 */
export const SAMPLE_MODULUS = 4

/**
 * Each file also indexes its MIN_HASHES smallest fingerprints (min-hash; ordered by their last 8
 * bytes, independent of the first byte the modulus looks at), so a file of one or two chunks is
 * findable even when none of its chunks passes the modulus.
 */
export const MIN_HASHES = 2

/** True when `fp` passes the modulus rule. */
export function passesSample(fp: Fingerprint): boolean {
  return Number.parseInt(fp.slice(0, 2), 16) % SAMPLE_MODULUS === 0
}

/** The min-hash key of a fingerprint: its last 8 bytes as hex (fixed width, so string order works). */
function minKey(fp: Fingerprint): string {
  return fp.slice(16)
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
    smallest.sort((a, b) => (minKey(a) < minKey(b) ? -1 : minKey(a) > minKey(b) ? 1 : 0))
  }
  for (const fp of smallest) out.add(fp)
  return [...out]
}
