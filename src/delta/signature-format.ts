import { ensureData } from '../errors.js'
import { fingerprint } from '../hash/index.js'
import { ByteReader, ByteWriter, openFormat } from './bytes.js'
import { packedKeyBytes, packKeys, unpackKeys } from './key-packing.js'
import { EMPTY_SIGNATURE, MAX_BLOCK, type Signature } from './signature.js'

/** First bytes of a signature file: "dsS" and the format version (protocol/DELTA.md). */
export const SIGNATURE_MAGIC = Object.freeze([0x64, 0x73, 0x53])
/** 2: strong keys are MurmurHash3 bits (block-hash.ts), not SHA-256 bits as in version 1.
 *  3: weak keys are the rolling hash's top bits, not fmix32's (rolling-hash.ts weakKey). */
export const SIGNATURE_VERSION = 3

/** No signature is this big: 2^53-byte seeds at the largest block take ~70 MiB of sums. */
export const MAX_SIGNATURE_BYTES = 256 * 1024 * 1024
/** Bytes of the check that ends a signature: the first 4 bytes of SHA-256 of all before it. */
const CHECK_BYTES = 4

function check(bytes: Uint8Array): Uint8Array {
  return Buffer.from(fingerprint(bytes).slice(0, CHECK_BYTES * 2), 'hex')
}

/** Number of blocks a seed of `size` bytes has at `blockSize`. */
export function blockCount(size: number, blockSize: number): number {
  return size === 0 ? 0 : Math.ceil(size / blockSize)
}

/** Encodes a signature: a small header, then each block's weak and strong keys bit-packed
 *  (weakBits + strongBits bits per block, most significant bit first), then a 4-byte check. */
export function encodeSignature(sig: Signature): Uint8Array {
  const n = sig.weak.length
  const w = new ByteWriter(16 + packedKeyBytes(n, sig.weakBits, sig.strongBits))
  for (const m of SIGNATURE_MAGIC) w.u8(m)
  w.u8(SIGNATURE_VERSION)
  w.varint(sig.seedSize)
  w.varint(sig.blockSize)
  w.u8(sig.weakBits)
  w.u8(sig.strongBits)
  const packed = packKeys(sig.weak, sig.strong, sig.weakBits, sig.strongBits)
  w.bytes(packed)
  const body = w.take()
  const out = new Uint8Array(body.length + CHECK_BYTES)
  out.set(body)
  out.set(check(body), body.length)
  return out
}

/**
 * Decodes and checks a signature. Any truncation, extension, corruption (the 4-byte check),
 * unknown version or field out of range → DsyncError BAD_DATA. Allocates in proportion to the
 * input's length only.
 */
export function decodeSignature(bytes: Uint8Array): Signature {
  const r = openFormat(bytes, SIGNATURE_MAGIC, SIGNATURE_VERSION, 'signature', '; make it again with this dsync')
  ensureData(bytes.length >= CHECK_BYTES, 'signature: truncated')
  const body = bytes.subarray(0, bytes.length - CHECK_BYTES)
  const stored = bytes.subarray(bytes.length - CHECK_BYTES)
  ensureData(check(body).every((b, i) => b === stored[i]), 'signature is corrupted or truncated (its check does not match)')
  const br = new ByteReader(body, 'signature')
  br.pos = r.pos
  const seedSize = br.varint()
  const blockSize = br.varint()
  const weakBits = br.u8()
  const strongBits = br.u8()
  ensureData(weakBits >= 1 && weakBits <= 32 && strongBits >= 1 && strongBits <= 32, 'signature: key widths out of range')
  if (seedSize === 0 && blockSize === 0) {
    ensureData(br.left === 0, 'signature: trailing bytes')
    return { ...EMPTY_SIGNATURE, weakBits, strongBits }
  }
  ensureData(blockSize >= 1 && blockSize <= MAX_BLOCK, `signature: block size ${blockSize} out of range`)
  const n = blockCount(seedSize, blockSize)
  // Checked before allocating: the block count must agree with the bytes present.
  ensureData(br.left === packedKeyBytes(n, weakBits, strongBits), 'signature: block list length does not match the seed size')
  const { weak, strong } = unpackKeys(br.bytes(br.left), n, weakBits, strongBits)
  return { seedSize, blockSize, weakBits, strongBits, weak, strong }
}
