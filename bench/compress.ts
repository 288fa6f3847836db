/**
 * Literal compression: each zstd backend that loads here (Node's own zlib zstd, libzstd as
 * WebAssembly) and deflate, level 3 (deflate 6, as src/compress/ uses them), 1 MiB frames (the
 * delta writer's LITERAL_FRAME_BYTES), on 16 MiB of code-like text and of random bytes. Prints
 * ratio, compress and decompress MB/s (wall, and per CPU second: steadier on a shared machine).
 * `npm run bench -- compress`; run it under another Node (22.15+) to see node:zlib too.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { DEFAULT_LEVEL, loadZstdBackends } from '../src/compress/index.js'
import { MiB, seededBytes } from './support/data.js'
import { codeText } from './support/delta-data.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'
import { mbps, time } from './support/timing.js'

const SIZE = 16 * MiB

interface Coder {
  readonly name: string
  compress(raw: Uint8Array): Uint8Array
  decompress(data: Uint8Array, rawLength: number): Uint8Array
}

function frames(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = []
  for (let at = 0; at < data.length; at += MiB) out.push(data.subarray(at, at + MiB))
  return out
}

export async function run(): Promise<void> {
  printEnvironment()
  const coders: Coder[] = (await loadZstdBackends()).map((b) => ({
    name: `zstd ${b.name}`,
    compress: (raw) => b.compress(raw, DEFAULT_LEVEL),
    decompress: (data, n) => b.decompress(data, n),
  }))
  coders.push({
    name: 'deflate node:zlib',
    compress: (raw) => deflateRawSync(raw, { level: 6 }),
    decompress: (data, n) => inflateRawSync(data, { maxOutputLength: Math.max(1, n) }),
  })
  const inputs = { 'code-like text': codeText(7, SIZE), random: seededBytes(7, SIZE) }
  const rows: Cell[][] = []
  for (const c of coders) {
    for (const [what, data] of Object.entries(inputs)) {
      const raw = frames(data)
      const packed = raw.map((f) => c.compress(f))
      packed.forEach((p, i) => {
        if (!Buffer.from(c.decompress(p, raw[i]!.length)).equals(raw[i]!)) throw new Error(`${c.name}: frame ${i} does not round-trip`)
      })
      const stored = packed.reduce((n, p) => n + p.length, 0)
      const tc = await time(() => raw.forEach((f) => c.compress(f)), { runs: 5 })
      const td = await time(() => packed.forEach((p, i) => c.decompress(p, raw[i]!.length)), { runs: 5 })
      rows.push([c.name, what, SIZE / stored, mbps(SIZE, tc.medianMs), mbps(SIZE, tc.medianCpuMs), mbps(SIZE, td.medianMs), mbps(SIZE, td.medianCpuMs)])
    }
  }
  printTable(
    `Literal compression, level ${DEFAULT_LEVEL} (deflate 6), 1 MiB frames, 16 MiB, median of 5`,
    ['codec', 'data', 'ratio', 'comp MB/s', 'per CPU s', 'decomp MB/s', 'per CPU s'],
    rows,
    2,
  )
}
