import { fmix32 } from './rolling-hash.js'

/**
 * The strong half of a block's keys: MurmurHash3 x86_32 (Austin Appleby's reference,
 * `MurmurHash3_x86_32`) of the block with seed BLOCK_HASH_SEED. Part of the signature format
 * (protocol/DELTA.md, version 2); golden values against the reference in test/delta/block-hash.ts.
 *
 * Why not SHA-256 (version 1): a block keeps 12–20 bits of it, and what guards correctness is
 * the whole-file SHA-256 in the delta's trailer (a false match ends in DIGEST_MISMATCH and sync
 * resends the file whole), so a block key needs good spread on natural data, not collision
 * resistance. A crafted target can make false matches; it then costs one retry, which whoever
 * crafts the target could cause anyway by sending garbage. On this 2-core Xeon without SHA
 * extensions (loaded), per CPU second over 4 KiB blocks: node:crypto SHA-256 190–300 MB/s,
 * this 840 MB/s aligned and 530 MB/s at odd offsets (the sender's search). A two-lane variant
 * and a plain multiply/xorshift ran 0.8–1.1 GB/s in the same test: not enough to leave a
 * function with published reference vectors.
 */
export const BLOCK_HASH_SEED = 0x64734b32 // 'dsK2'

const C1 = 0xcc9e2d51
const C2 = 0x1b873593

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** The little-endian 32-bit word at data[i..i+4), from bytes (the portable, slow path). */
function wordAt(data: Uint8Array, i: number): number {
  return data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)
}

function mixWord(h: number, k: number): number {
  k = Math.imul(k, C1)
  k = (k << 15) | (k >>> 17)
  k = Math.imul(k, C2)
  h ^= k
  h = (h << 13) | (h >>> 19)
  return (Math.imul(h, 5) + 0xe6546b64) | 0
}

/**
 * MurmurHash3 x86_32 of `data[start..start+len)` with `seed`, as an unsigned 32-bit number.
 * Any offset: whole words are read through an Int32Array view of the underlying buffer (two
 * aligned loads and shifts when `start` is not 4-aligned), bytes only at the ends.
 */
export function murmur3(data: Uint8Array, start: number, len: number, seed: number): number {
  let h = seed | 0
  const nWords = len >>> 2
  let j = 0 // words done
  if (LITTLE_ENDIAN && nWords > 0) {
    const abs = data.byteOffset + start
    const words = new Int32Array(data.buffer, 0, data.buffer.byteLength >>> 2)
    const w0 = abs >>> 2
    const s = (abs & 3) * 8
    if (s === 0) {
      for (; j < nWords; j++) h = mixWord(h, words[w0 + j]!)
    } else {
      // The last aligned word read must lie inside the buffer; the rest is read by bytes.
      const safe = Math.min(nWords, words.length - w0 - 1)
      let lo = words[w0]! >>> s
      for (; j < safe; j++) {
        const hi = words[w0 + j + 1]!
        h = mixWord(h, lo | (hi << (32 - s)))
        lo = hi >>> s
      }
    }
  }
  for (; j < nWords; j++) h = mixWord(h, wordAt(data, start + 4 * j))
  const t = start + 4 * nWords
  const rest = len & 3
  if (rest > 0) {
    let k = data[t]!
    if (rest > 1) k |= data[t + 1]! << 8
    if (rest > 2) k |= data[t + 2]! << 16
    k = Math.imul(k, C1)
    k = (k << 15) | (k >>> 17)
    h ^= Math.imul(k, C2)
  }
  return fmix32(h ^ len)
}

/** The block hash the signature's strong keys are bits of. */
export function blockHash(data: Uint8Array, start: number, len: number): number {
  return murmur3(data, start, len, BLOCK_HASH_SEED)
}
