import { applyDelta, computeSignature, decodeSignature, encodeDelta, encodeSignature, type DeltaStats, type SeedReader } from '../../../src/delta/index.js'
import { collect, splitStream } from '../../support/random.js'

/** A seed held in memory, readable by applyDelta. */
export function memorySeed(seed: Uint8Array): SeedReader {
  return { size: seed.length, read: async (offset, length) => seed.slice(offset, offset + length) }
}

/** The parts joined, as a plain Uint8Array (tests compare it with strictSame). */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts))
}

/** Builds the signature and the delta, through their byte encodings, with the given splits. */
export async function makeDelta(
  seed: Uint8Array,
  target: Uint8Array,
  o: { blockSize?: number; sigSplit?: number[]; targetSplit?: number[] } = {},
): Promise<{ sigBytes: Uint8Array; delta: Uint8Array; stats: DeltaStats }> {
  const sig = await computeSignature(splitStream(seed, o.sigSplit ?? [65536]), { size: seed.length, blockSize: o.blockSize })
  const sigBytes = encodeSignature(sig)
  const d = encodeDelta(decodeSignature(sigBytes), splitStream(target, o.targetSplit ?? [65536]))
  const delta = concat(await collect(d.bytes))
  return { sigBytes, delta, stats: d.stats() }
}

/** Applies a delta held in memory (split as given) to a seed held in memory. */
export async function patchBytes(seed: Uint8Array | null, delta: Uint8Array, split: number[] = [65536]): Promise<Uint8Array> {
  const out: Uint8Array[] = []
  await applyDelta(seed === null ? null : memorySeed(seed), splitStream(delta, split), { write: async (b) => void out.push(b.slice()) })
  return concat(out)
}

/** Byte equality, fast (tap's deep `same` is slow on large arrays and prints them on failure). */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length))
}
