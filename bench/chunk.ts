/**
 * Chunking throughput (issue 2): CDC, FSP and SBC on 256 MiB in memory; end to end on a
 * 1 GiB file from the page cache; and chunk count and list size per average chunk size, to
 * justify the default. Seeded data; median of N runs after a warm-up.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  BlockTable,
  cdcCutter,
  chunkBytes,
  chunkParams,
  fspCutter,
  sbcBaseChunks,
  sbcChunks,
  type ChunkParams,
  type Cutter,
} from '../src/chunk/index.js'
import { CDC_WASM_AVAILABLE } from '../src/chunk/cdc.js'
import { isBulkCutter } from '../src/chunk/bulk-cutter.js'
import { openFileSource } from '../src/fs/index.js'
import { editedCopy, GiB, inPieces, KiB, MiB, seededBytes } from './support/data.js'
import { peakRss } from './support/memory.js'
import { mib, printEnvironment, printTable, type Cell } from './support/table.js'
import { mbps, median, time } from './support/timing.js'

const IN_MEMORY = 256 * MiB
const FILE_BYTES = 1 * GiB
/** Bytes of list per chunk on the wire: 16 B fingerprint + 4 B length. */
const LIST_BYTES_PER_CHUNK = 20

/** Chunk sizes summary: count, mean and standard deviation in bytes. */
interface SizeStats {
  readonly count: number
  readonly mean: number
  readonly stdev: number
}

function sizeStats(lengths: Iterable<number>): SizeStats {
  let count = 0
  let sum = 0
  let sq = 0
  for (const l of lengths) {
    count++
    sum += l
    sq += l * l
  }
  const mean = sum / count
  return { count, mean, stdev: Math.sqrt(Math.max(0, sq / count - mean * mean)) }
}

/** All cut points of `data` through the bulk path (as chunkStream uses it), or `cut()`. */
function cutLengths(data: Uint8Array, cutter: Cutter, bulk: boolean): number[] {
  const out: number[] = []
  const ends = new Int32Array(4096)
  let pos = 0
  while (pos < data.length) {
    if (bulk && isBulkCutter(cutter)) {
      const count = cutter.cutMany(data, pos, data.length, true, ends)
      for (let j = 0; j < count; j++) {
        out.push(ends[j]! - pos)
        pos = ends[j]!
      }
    } else {
      const len = cutter.cut(data, pos, Math.min(data.length, pos + cutter.maxSize))
      out.push(len)
      pos += len
    }
  }
  return out
}

function statCells(s: SizeStats): Cell[] {
  return [s.count, s.mean / KiB, s.stdev / KiB]
}

async function inMemory(data: Uint8Array): Promise<void> {
  const params = chunkParams()
  const fsp = chunkParams({ kind: 'fsp' })
  const cutRows: [string, Cutter, boolean][] = [
    [`cdc cutMany, ${CDC_WASM_AVAILABLE ? 'wasm' : 'js (no WebAssembly)'}`, cdcCutter(params), true],
    ['cdc cutMany, js', cdcCutter(params, { kernel: 'js' }), true],
    ['cdc cut(), js', cdcCutter(params), false],
    ['fsp cut()', fspCutter(fsp), false],
  ]
  const rows: Cell[][] = []
  for (const [name, cutter, bulk] of cutRows) {
    let lengths: number[] = []
    const t = await time(() => (lengths = cutLengths(data, cutter, bulk)), { warmup: 1, runs: 5 })
    rows.push([name, mbps(data.length, t.medianMs), mbps(data.length, t.medianCpuMs), ...statCells(sizeStats(lengths)), mib(peakRss())])
  }
  printTable(
    `Cut points only, ${mib(data.length)} MiB in memory, avg 8 KiB (median of 5; peak RSS includes the input)`,
    ['chunker', 'MB/s', 'MB/s per CPU s', 'chunks', 'avg KiB', 'stdev KiB', 'peak RSS MiB'],
    rows,
  )

  const fpRows: Cell[][] = []
  for (const [name, cutter] of [['cdc', cdcCutter(params)], ['fsp', fspCutter(fsp)]] as const) {
    let n: SizeStats = sizeStats([])
    const t = await time(() => (n = sizeStats(chunkBytes(data, cutter).map((c) => c.length))), { warmup: 1, runs: 3 })
    fpRows.push([name, mbps(data.length, t.medianMs), mbps(data.length, t.medianCpuMs), ...statCells(n), mib(peakRss())])
  }
  // SBC is relative: chunk an edited copy against the blocks of the original. The table is
  // rebuilt outside the timer for every run, because sbcChunks extends it.
  const edited = editedCopy(data, 2, 1024, 64)
  const sbcMs: number[] = []
  const sbcCpuMs: number[] = []
  let sbc: SizeStats = sizeStats([])
  for (let run = 0; run < 3; run++) {
    const table = new BlockTable(fsp.avg)
    await sbcBaseChunks(inPieces(data, MiB), table)
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    sbc = sizeStats((await sbcChunks(inPieces(edited, MiB), table)).map((c) => c.length))
    sbcMs.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    sbcCpuMs.push((c.user + c.system) / 1000)
  }
  fpRows.push([
    'sbc (edited copy vs original)',
    mbps(edited.length, median(sbcMs)),
    mbps(edited.length, median(sbcCpuMs)),
    ...statCells(sbc),
    mib(peakRss()),
  ])
  printTable(
    `Cut + SHA-256 fingerprint per chunk, ${mib(data.length)} MiB in memory (median of 3)`,
    ['chunker', 'MB/s', 'MB/s per CPU s', 'chunks', 'avg KiB', 'stdev KiB', 'peak RSS MiB'],
    fpRows,
  )
}

/** Chunk count, list size and the bytes an edit pattern changes, per average chunk size. */
function avgSizes(): void {
  const base = seededBytes(3, 64 * MiB)
  const edited = editedCopy(base, 4, 256, 100)
  const rows: Cell[][] = []
  for (const avg of [2, 4, 8, 16, 32].map((k) => k * KiB)) {
    const params: ChunkParams = chunkParams({ avg })
    const a = chunkBytes(base, cdcCutter(params))
    const b = chunkBytes(edited, cdcCutter(params))
    const known = new Set(a.map((c) => c.fp))
    const changed = b.filter((c) => !known.has(c.fp)).reduce((n, c) => n + c.length, 0)
    const list = a.length * LIST_BYTES_PER_CHUNK
    const s = sizeStats(a.map((c) => c.length))
    rows.push([`${avg / KiB}k`, s.count, s.stdev / KiB, list / KiB, (100 * list) / base.length, changed / KiB, (list + changed) / KiB])
  }
  printTable(
    'Average chunk size: 64 MiB, then a copy with 256 scattered edits of 1–100 B (list: 20 B per chunk)',
    ['avg', 'chunks', 'stdev KiB', 'list KiB', 'list %', 'changed KiB', 'list+changed KiB'],
    rows,
    2,
  )
}

/** Writes `bytes` of seeded data to `path` in 64 MiB pieces (bounded memory). */
async function writeSeededFile(path: string, bytes: number): Promise<void> {
  const fh = await open(path, 'w')
  try {
    for (let off = 0, k = 0; off < bytes; off += 64 * MiB, k++) {
      await fh.write(seededBytes(1000 + k, Math.min(64 * MiB, bytes - off)))
    }
  } finally {
    await fh.close()
  }
}

async function endToEnd(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'dsync-bench-'))
  try {
    const file = join(dir, 'one-gib.bin')
    await writeSeededFile(file, FILE_BYTES)
    for await (const _ of openFileSource(file)); // into the page cache before timing
    const child = fileURLToPath(new URL('./support/e2e-child.js', import.meta.url))
    const modes: [string, string][] = [
      ['read', 'read only (1 MiB reads, reused buffer)'],
      ['digest', 'read + whole-file SHA-256'],
      ['cut', 'read + CDC cut points (chunkStream)'],
      ['cdc', 'chunkPath cdc: cut + fingerprint + digest'],
      ['fsp', 'chunkPath fsp: cut + fingerprint + digest'],
    ]
    const rows: Cell[][] = []
    for (const [mode, what] of modes) {
      const out = execFileSync(process.execPath, [child, mode, file, '3'], { encoding: 'utf8' })
      const r = JSON.parse(out) as { medianMs: number; medianCpuMs: number; peakRss: number }
      rows.push([what, mbps(FILE_BYTES, r.medianMs), mbps(FILE_BYTES, r.medianCpuMs), r.medianMs / 1000, mib(r.peakRss)])
    }
    printTable(
      '1 GiB file from the page cache, one thread (median of 3, each in a fresh process)',
      ['pipeline', 'MB/s', 'MB/s per CPU s', 'seconds', 'peak RSS MiB'],
      rows,
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export async function run(): Promise<void> {
  printEnvironment()
  await endToEnd()
  await inMemory(seededBytes(1, IN_MEMORY))
  avgSizes()
}
