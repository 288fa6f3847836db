import { applyDelta, type AppliedDelta, type ExpectedTarget, type SeedReader } from '../delta/index.js'
import { writeAtomically, type AtomicWriteOptions } from './atomic-write.js'
import { openSeedsReader } from './seed-reader.js'

/**
 * Rebuilds `outPath` from a seed file and a delta: applyDelta into writeAtomically, so the target
 * is verified (size and SHA-256, or XXH3-128: applyDelta) before the rename, and on any error `outPath` is untouched.
 * `seedPath` may equal `outPath` (patching in place): the seed stays open and readable until the
 * rename replaces it. `seedPath` null: a delta made against EMPTY_SIGNATURE; a SeedReader: the
 * seed as the caller holds it (memorySeedReader: read once for its signature too), which the
 * caller closes. `expect`: the
 * target must have this size and digest (else SOURCE_CHANGED, nothing renamed). `ownedDelta`:
 * the delta's buffers are never reused once yielded (applyDelta `ownedInput`).
 */
export async function patchFile(
  seedPath: string | readonly string[] | SeedReader | null,
  delta: AsyncIterable<Uint8Array>,
  outPath: string,
  opts: AtomicWriteOptions & { noFollow?: boolean; expect?: ExpectedTarget; ownedDelta?: boolean } = {},
): Promise<AppliedDelta> {
  const noFollow = opts.noFollow === true
  // applyDelta keeps a read no longer than until the call after next: the reader may reuse them.
  const opened = seedPath === null || isSeedReader(seedPath) ? undefined : await openSeedsReader(typeof seedPath === 'string' ? [seedPath] : seedPath, { noFollow, reuse: true })
  // Not opened here: the caller's reader (which it closes), or none.
  const seed = opened ?? (seedPath as SeedReader | null)
  try {
    const sizeHint = opts.sizeHint ?? opts.expect?.size
    return await writeAtomically(outPath, (sink) => applyDelta(seed, delta, sink, { signal: opts.signal, expect: opts.expect, ownedInput: opts.ownedDelta === true }), {
      ...opts,
      ...(sizeHint !== undefined && { sizeHint }),
    })
  } finally {
    await opened?.close()
  }
}

function isSeedReader(seed: string | readonly string[] | SeedReader): seed is SeedReader {
  return typeof seed === 'object' && 'read' in seed
}
