/**
 * Hash candidates for chunk fingerprints and whole-file digests (issue 2): MB/s per 8 KiB
 * chunk (one-shot, as `fingerprint` hashes each chunk), and incremental SHA-256 by update
 * size (as FileDigester is fed). No xxhash or hash-wasm here: not installed, and not added
 * for a benchmark.
 */
import { blake3 } from '@noble/hashes/blake3.js'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { createHash, hash as cryptoHash } from 'node:crypto'
import { fingerprint } from '../src/hash/index.js'
import { KiB, MiB, seededBytes } from './support/data.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'
import { mbps, time } from './support/timing.js'

const CHUNK = 8 * KiB

/** [wall, CPU] MB/s of `fn` over `data` cut into `size`-byte pieces (median of 5 after one
 *  warm-up). */
async function perPiece(data: Uint8Array, size: number, fn: (piece: Uint8Array) => unknown): Promise<[number, number]> {
  const t = await time(
    () => {
      for (let p = 0; p < data.length; p += size) fn(data.subarray(p, p + size))
    },
    { warmup: 1, runs: 5 },
  )
  return [mbps(data.length, t.medianMs), mbps(data.length, t.medianCpuMs)]
}

export async function run(): Promise<void> {
  printEnvironment()
  const big = seededBytes(5, 64 * MiB) // native hashes
  const small = seededBytes(6, 8 * MiB) // pure-JS hashes, ~10× slower
  const candidates: [string, Uint8Array, (b: Uint8Array) => unknown][] = [
    ['node:crypto sha256 (the fingerprint hash)', big, (b) => cryptoHash('sha256', b, 'buffer')],
    ['fingerprint(): sha256 → 32 hex chars', big, (b) => fingerprint(b)],
    ['node:crypto sha1', big, (b) => cryptoHash('sha1', b, 'buffer')],
    ['node:crypto md5 (the seed paper\'s hash)', big, (b) => cryptoHash('md5', b, 'buffer')],
    ['node:crypto sha512-256', big, (b) => cryptoHash('sha512-256', b, 'buffer')],
    ['node:crypto blake2b512', big, (b) => cryptoHash('blake2b512', b, 'buffer')],
    ['node:crypto blake2s256', big, (b) => cryptoHash('blake2s256', b, 'buffer')],
    ['@noble/hashes sha256', small, (b) => nobleSha256(b)],
    ['@noble/hashes blake3', small, (b) => blake3(b)],
  ]
  const rows: Cell[][] = []
  for (const [name, data, fn] of candidates) rows.push([name, ...(await perPiece(data, CHUNK, fn))])
  printTable('One-shot hash per 8 KiB chunk (median of 5)', ['hash', 'MB/s', 'MB/s per CPU s'], rows)

  const digestRows: Cell[][] = []
  for (const size of [8 * KiB, 64 * KiB, MiB, 4 * MiB]) {
    const t = await time(
      () => {
        const h = createHash('sha256')
        for (let p = 0; p < big.length; p += size) h.update(big.subarray(p, p + size))
        return h.digest()
      },
      { warmup: 1, runs: 5 },
    )
    const label = size >= MiB ? `${size / MiB} MiB` : `${size / KiB} KiB`
    digestRows.push([label, mbps(big.length, t.medianMs), mbps(big.length, t.medianCpuMs)])
  }
  printTable(
    'Whole-file SHA-256 (createHash, incremental) by update size, 64 MiB (median of 5)',
    ['update size', 'MB/s', 'MB/s per CPU s'],
    digestRows,
  )
}
