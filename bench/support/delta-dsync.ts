/**
 * One dsync round through the in-process API, as the wire would carry it: the seed's signature
 * (computeSignature, encoded, decoded again), the target's delta against it (to a file), and
 * the patch (patchFile: streamed, verified, atomic).
 */
import { open, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { computeSignature, decodeSignature, encodeDelta, encodeSignature, type DeltaStats } from '../../src/delta/index.js'
import { openFileSource, patchFile } from '../../src/fs/index.js'

/** What one dsync round sent and how long each step took. */
export interface DsyncRound {
  readonly sigBytes: number
  readonly deltaBytes: number
  readonly blockSize: number
  readonly keyBits: number
  readonly stats: DeltaStats
  readonly signatureMs: number
  readonly deltaMs: number
  readonly patchMs: number
}

export async function dsyncRound(seed: string, target: string, out: string, dir: string): Promise<DsyncRound> {
  const t0 = performance.now()
  const size = (await stat(seed)).size
  const sig = await computeSignature(openFileSource(seed), { size })
  const sigBytes = encodeSignature(sig)
  await writeFile(join(dir, 'dsync.sig'), sigBytes)
  const t1 = performance.now()
  const deltaPath = join(dir, 'dsync.delta')
  const d = encodeDelta(decodeSignature(sigBytes), openFileSource(target))
  const fh = await open(deltaPath, 'w')
  try {
    for await (const piece of d.bytes) await fh.write(piece)
  } finally {
    await fh.close()
  }
  const t2 = performance.now()
  await patchFile(seed, openFileSource(deltaPath), out)
  const t3 = performance.now()
  const stats = d.stats()
  return {
    sigBytes: sigBytes.length,
    deltaBytes: stats.encodedBytes,
    blockSize: sig.blockSize,
    keyBits: sig.weakBits + sig.strongBits,
    stats,
    signatureMs: t1 - t0,
    deltaMs: t2 - t1,
    patchMs: t3 - t2,
  }
}
