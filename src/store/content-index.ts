import type { Database } from 'lmdb'
import { fingerprintToBytes, FINGERPRINT_BYTES } from '../hash/index.js'
import type { Chunk, FileDigest, Fingerprint } from '../types.js'
import { sampleFingerprints } from './sampling.js'

/**
 * A fingerprint held by more files than this says little about which file is the best seed
 * (a block of zeros, a common license header), and reading its whole posting list would make one
 * query cost as much as a scan: such fingerprints are skipped at query time (sif's and dupi's
 * stop-list of too-common keys).
 */
export const MAX_POSTINGS = 1000

/** 16 raw bytes of a fingerprint: the index key. */
export function fingerprintKey(fp: Fingerprint): Buffer {
  const key = Buffer.allocUnsafe(FINGERPRINT_BYTES)
  fingerprintToBytes(fp, key)
  return key
}

/** 32 raw bytes of a whole-file digest: the exact-copy key. */
export function digestKey(digest: FileDigest): Buffer {
  return Buffer.from(digest, 'hex')
}

/**
 * The content index: sampled chunk fingerprint → ids of the files holding it (sif-style, small),
 * and whole-file digest → ids of the files with exactly that content (complete, not sampled).
 * Both are lmdb dupSort databases, so a posting list is a sorted set of 4-byte ids.
 * Writes must run inside the store's write transaction, together with the record they index,
 * so the index and the records cannot disagree after a crash.
 */
export class ContentIndex {
  constructor(
    private readonly fps: Database<number, Buffer>,
    private readonly digests: Database<number, Buffer>,
  ) {}

  /** Indexes file `id` with this content. Call inside a write transaction. */
  add(id: number, digest: FileDigest, chunks: readonly Chunk[]): void {
    this.digests.put(digestKey(digest), id)
    for (const fp of sampleFingerprints(chunks)) this.fps.put(fingerprintKey(fp), id)
  }

  /** Removes what `add` added for the same id and content. Call inside a write transaction. */
  remove(id: number, digest: FileDigest, chunks: readonly Chunk[]): void {
    this.digests.remove(digestKey(digest), id)
    for (const fp of sampleFingerprints(chunks)) this.fps.remove(fingerprintKey(fp), id)
  }

  /** Ids of the files whose whole content has this digest. */
  idsWithDigest(digest: FileDigest): number[] {
    return [...this.digests.getValues(digestKey(digest))]
  }

  /** Ids of the files holding the sampled fingerprint `fp`; empty when it is too common. */
  idsWithFingerprint(fp: Fingerprint): Iterable<number> {
    const key = fingerprintKey(fp)
    if (this.fps.getValuesCount(key) > MAX_POSTINGS) return []
    return this.fps.getValues(key)
  }

  /**
   * Ids of the files holding a sampled fingerprint that starts with `prefix` (a probe key: a
   * few bytes of a fingerprint; keys are sorted, so it is one short range). Fingerprints held
   * by more than MAX_POSTINGS files are skipped, as in idsWithFingerprint.
   */
  idsWithFingerprintPrefix(prefix: Uint8Array): Set<number> {
    const n = Math.min(prefix.length, FINGERPRINT_BYTES)
    const start = Buffer.alloc(FINGERPRINT_BYTES)
    start.set(prefix.subarray(0, n))
    const end = afterPrefix(start, n)
    const ids = new Set<number>()
    for (const key of this.fps.getKeys(end === undefined ? { start } : { start, end })) {
      if (this.fps.getValuesCount(key) > MAX_POSTINGS) continue
      for (const id of this.fps.getValues(key)) ids.add(id)
    }
    return ids
  }

  /** Empties both databases (after a chunk-params change). Call inside a write transaction. */
  clear(): void {
    this.fps.clearSync()
    this.digests.clearSync()
  }
}

/** The first key after every key starting with `key`'s first `n` bytes (those bytes as a
 *  big-endian number plus one, the rest zero); undefined when they are all 0xff. */
function afterPrefix(key: Buffer, n: number): Buffer | undefined {
  const end = Buffer.alloc(key.length)
  key.copy(end, 0, 0, n)
  for (let i = n - 1; i >= 0; i--) {
    if (end[i] !== 0xff) {
      end[i]! += 1
      return end
    }
    end[i] = 0
  }
  return undefined
}
