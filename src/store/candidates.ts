import type { Chunk, Fingerprint } from '../types.js'
import { comparePaths } from '../fs/index.js'
import { sampleFingerprints } from './sampling.js'

/** A seed candidate: a path and its estimated containment of the target, in 0..1. */
export interface Candidate {
  readonly path: string
  readonly score: number
}

/** What ranking needs from the store: the posting list of a fingerprint, and an id's path. */
export interface CandidateSource {
  idsWithFingerprint(fp: Fingerprint): Iterable<number>
  pathOf(id: number): string | undefined
}

/**
 * Files sharing content with `chunks`, best first. One posting-list lookup per sampled target
 * fingerprint; a file's score is the bytes of the target's sampled chunks it also holds over all
 * the target's sampled bytes: an estimate of containment (how much of the target it can
 * supply) on a 1-in-SAMPLE_MODULUS sample. Ties go to the smaller path (comparePaths), so the
 * answer does not depend on insertion order.
 */
export function rankCandidates(
  chunks: readonly Chunk[],
  source: CandidateSource,
  opts: { limit?: number; exclude?: readonly string[] } = {},
): Candidate[] {
  const limit = opts.limit ?? 8
  if (limit <= 0 || chunks.length === 0) return []
  const sampled = new Set(sampleFingerprints(chunks))
  // Weight of each sampled fingerprint: the target bytes it stands for (every occurrence).
  const weight = new Map<Fingerprint, number>()
  let total = 0
  for (const c of chunks) {
    if (!sampled.has(c.fp)) continue
    weight.set(c.fp, (weight.get(c.fp) ?? 0) + c.length)
    total += c.length
  }
  if (total === 0) return []
  const byId = new Map<number, number>()
  for (const [fp, w] of weight) {
    for (const id of source.idsWithFingerprint(fp)) byId.set(id, (byId.get(id) ?? 0) + w)
  }
  const exclude = new Set(opts.exclude ?? [])
  const found: Candidate[] = []
  for (const [id, bytes] of byId) {
    const path = source.pathOf(id)
    if (path === undefined || exclude.has(path)) continue
    found.push({ path, score: bytes / total })
  }
  found.sort((a, b) => b.score - a.score || comparePaths(a.path, b.path))
  return found.slice(0, limit)
}
