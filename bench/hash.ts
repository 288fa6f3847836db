/**
 * Hash candidates for chunk fingerprints and whole-file digests (issue 2): MB/s per 8 KiB
 * chunk (one-shot, as `fingerprint` hashes each chunk), and incremental SHA-256 by update
 * size (as FileDigester is fed), against XXH3-128 (hash-wasm, the check of a large file sent
 * whole: src/hash/stream-check.ts). Then the delta's block keys and byte search, the
 * WebAssembly kernel against the JS loops (src/delta/hash-kernel.ts). Run it again with
 * `OPENSSL_ia32cap=:~0x20000000` to see SHA-256 on a CPU without SHA extensions.
 */
import { blake3 } from '@noble/hashes/blake3.js'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { createHash, hash as cryptoHash } from 'node:crypto'
import { blockHasher, type HashKernelKind } from '../src/delta/hash-kernel.js'
import { fingerprint, newStreamChecker } from '../src/hash/index.js'
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
    const x = await time(
      async () => {
        const checker = await newStreamChecker() // a checker per file, as encodeDelta makes one
        for (let p = 0; p < big.length; p += size) checker.update(big.subarray(p, p + size))
        return checker.digest()
      },
      { warmup: 1, runs: 5 },
    )
    digestRows.push([label, mbps(big.length, t.medianMs), mbps(big.length, t.medianCpuMs), mbps(big.length, x.medianMs), mbps(big.length, x.medianCpuMs)])
  }
  printTable(
    'Whole-file SHA-256 (createHash, incremental) and XXH3-128 (hash-wasm) by update size, 64 MiB (median of 5)',
    ['update size', 'SHA-256 MB/s', 'per CPU s', 'XXH3-128 MB/s', 'per CPU s'],
    digestRows,
  )

  const keyRows: Cell[][] = []
  const block = 18 * KiB // the round-1 blocks of a 1 GiB file with ~1,000 changed regions
  for (const kind of ['js', 'wasm'] as HashKernelKind[]) {
    const h = blockHasher(big.length, undefined, kind)
    h.bytes.set(big)
    const each = async (fn: (at: number) => unknown): Promise<[number, number]> => {
      const t = await time(() => {
        for (let at = 0; at + block <= big.length; at += block) fn(at)
      }, { warmup: 1, runs: 5 })
      return [mbps(big.length, t.medianMs), mbps(big.length, t.medianCpuMs)]
    }
    keyRows.push([`${kind}: rolling hash`, ...(await each((at) => h.rolling(at, block)))])
    keyRows.push([`${kind}: block hash (MurmurHash3)`, ...(await each((at) => h.strong(at, block)))])
    keyRows.push([`${kind}: both keys (the signature; a run going on)`, ...(await each((at) => h.keys(at, block)))])
    // The search: a filter with one bit in 128 set (the matcher's stops are rarer than this
    // only on a seed of few blocks); every stop rolls on by one byte.
    const filter = new Uint8Array(1 << 17)
    for (let i = 0; i < filter.length; i += 16) filter[i] = 1 << (i & 7)
    const s = blockHasher(big.length, { blockSize: block, filter, filterShift: 32 - 20 }, kind)
    s.bytes.set(big)
    const t = await time(() => {
      const last = big.length - block - 1
      let q = 0
      let hash = s.rolling(0, block)
      while (q < last) {
        q = s.search(q, last, hash)
        hash = s.roll(q, s.hash)
        q++
      }
    }, { warmup: 1, runs: 5 })
    keyRows.push([`${kind}: byte search (roll + filter)`, mbps(big.length, t.medianMs), mbps(big.length, t.medianCpuMs)])
  }
  printTable(`Delta block keys over 64 MiB in ${block / KiB} KiB blocks, JS loops and WebAssembly kernel (median of 5)`, ['what', 'MB/s', 'MB/s per CPU s'], keyRows)
}
