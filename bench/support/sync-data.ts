/**
 * The before/after trees of bench/sync.ts (issue 4, "Benchmark"): one seeded pair per class of
 * change, written to disk with fixed modification times so that both tools' quick checks
 * (size + mtime) see exactly the files the class changes.
 */
import { mkdir, utimes, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { KiB, MiB, seededBytes } from './data.js'

/** Relative path → content. */
export type Tree = Map<string, Uint8Array>

/** One class of change: a before tree and the after tree a user would sync next. */
export interface SyncClass {
  /** Row label, short. */
  readonly name: string
  /** What changes, for the README. */
  readonly what: string
  /** Whether the delta-or-whole rule can matter (so the jaccard / lcs reruns say something). */
  readonly metricVariants: boolean
  /**
   * Put "before" on the receivers by a local copy, then let each tool sync it (unmeasured)
   * before the measured sync. For the 20,000-file no-op: a first dsync push of that many new
   * files takes minutes (see the README), which would eat the whole time budget of the bench
   * while telling nothing about the no-op it measures.
   */
  readonly seedByCopy?: boolean
  make(): { before: Tree; after: Tree }
}

/** Whole seconds: rsync and dsync both compare mtimes, and a fixed value keeps runs alike. */
export const BEFORE_TIME = 1_700_000_000
const AFTER_TIME = BEFORE_TIME + 86_400

/**
 * Writes `after` and `before` under `dir`/after and `dir`/before. A file of `after` holding the
 * very buffer of a `before` file (unchanged or renamed, as `mv` leaves it) keeps the old mtime;
 * anything else gets a later one. rsync --fuzzy looks for a basis of the same size and mtime
 * first, so renamed files must keep theirs to give fuzzy its fair chance.
 */
export async function writeTrees(dir: string, before: Tree, after: Tree): Promise<{ before: string; after: string }> {
  const old = new Set(before.values())
  const out = { before: join(dir, 'before'), after: join(dir, 'after') }
  await writeTree(out.before, before, () => BEFORE_TIME)
  // A no-op class: one tree on disk (writing 20,000 small files twice costs ~15 s here).
  if (after === before) return { before: out.before, after: out.before }
  await writeTree(out.after, after, (data) => (old.has(data) ? BEFORE_TIME : AFTER_TIME))
  return out
}

async function writeTree(root: string, tree: Tree, mtime: (data: Uint8Array) => number): Promise<void> {
  await mkdir(root, { recursive: true })
  const dirs = new Set([...tree.keys()].map((p) => dirname(p)))
  for (const d of dirs) await mkdir(join(root, d), { recursive: true })
  for (const [p, data] of tree) {
    const file = join(root, p)
    await writeFile(file, data)
    const t = mtime(data)
    await utimes(file, t, t)
  }
}

/** A seeded stream of 32-bit words. */
function words32(seed: number, n: number): Uint32Array {
  const b = seededBytes(seed, n * 4)
  return new Uint32Array(b.buffer, b.byteOffset, n)
}

/** A vocabulary of 512 seeded lowercase words of 2..9 letters. */
function vocabulary(seed: number): readonly string[] {
  const w = words32(seed, 512 * 10)
  return Array.from({ length: 512 }, (_, i) => {
    const len = 2 + (w[i * 10]! % 8)
    let s = ''
    for (let k = 0; k < len; k++) s += String.fromCharCode(97 + (w[i * 10 + 1 + k]! % 26))
    return s
  })
}

const VOCAB = vocabulary(4242)
const encoder = new TextEncoder()

/**
 * Seeded prose-like text of exactly `size` bytes: words from a fixed 512-word vocabulary (a
 * Zipf-ish pick, so it compresses about as well as real text, ~3x), lines of ~12 words.
 */
export function seededText(seed: number, size: number): Uint8Array {
  const w = words32(seed, Math.ceil(size / 3) + 16)
  const parts: string[] = []
  let n = 0
  for (let i = 0; n < size; i++) {
    const r = w[i % w.length]!
    // Squaring the draw favours the first words of the vocabulary, as real word use does.
    const pick = Math.floor(((r & 0xffff) / 0x10000) ** 2 * VOCAB.length)
    const sep = (r >>> 16) % 12 === 0 ? '\n' : ' '
    const word = VOCAB[pick]! + sep
    parts.push(word)
    n += word.length
  }
  return encoder.encode(parts.join('')).subarray(0, size)
}

/**
 * A seeded log of about `size` bytes (whole lines): timestamped request lines from `startLine`
 * on, so a later call with a larger `startLine` appends lines that continue the same log.
 */
export function seededLog(seed: number, startLine: number, size: number): Uint8Array {
  const lines: string[] = []
  const levels = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR']
  const paths = ['/api/items', '/api/users', '/login', '/static/app.js', '/api/orders', '/health']
  let n = 0
  for (let i = startLine; n < size; i++) {
    const w = words32(seed * 1_000_003 + i, 4)
    const at = new Date((BEFORE_TIME + i * 0.25) * 1000).toISOString()
    const line =
      `${at} ${levels[w[0]! % levels.length]} worker-${w[0]! % 8} req=${w[1]!.toString(16).padStart(8, '0')} ` +
      `${paths[w[2]! % paths.length]} status=${w[2]! % 7 === 0 ? 500 : 200} took=${w[3]! % 900}ms\n`
    lines.push(line)
    n += line.length
  }
  return encoder.encode(lines.join(''))
}

/** `base` with `edits` seeded text edits (replace, insert or delete up to `maxLen` bytes). */
export function textEdits(base: Uint8Array, seed: number, edits: number, maxLen: number): Uint8Array {
  const w = words32(seed, edits * 3)
  const at = Array.from({ length: edits }, (_, k) => w[k * 3]! % base.length).sort((a, b) => a - b)
  const parts: Uint8Array[] = []
  let pos = 0
  at.forEach((p, k) => {
    if (p < pos) return
    const len = 1 + (w[k * 3 + 1]! % maxLen)
    const kind = w[k * 3 + 2]! % 3
    parts.push(base.subarray(pos, p))
    if (kind !== 2) parts.push(seededText(seed * 31 + k, len))
    pos = kind === 1 ? p : Math.min(base.length, p + len)
  })
  parts.push(base.subarray(pos))
  return Buffer.concat(parts)
}


const pad = (i: number, n = 3): string => String(i).padStart(n, '0')

/** The classes of issue 4, at full size or divided by `shrink` (DSYNC_BENCH_QUICK). */
export function syncClasses(shrink: number): readonly SyncClass[] {
  const s = (n: number): number => Math.max(1, Math.round(n / shrink))
  return [
    {
      name: 'text edits',
      what: `${s(500)} text files × 20 KiB, ${s(50)} of them with 3 small edits`,
      metricVariants: true,
      make() {
        const before: Tree = new Map()
        for (let i = 0; i < s(500); i++) before.set(`docs/d${i % 10}/note-${pad(i)}.txt`, seededText(1000 + i, 20 * KiB))
        const after: Tree = new Map(before)
        const keys = [...before.keys()]
        for (let i = 0; i < s(50); i++) {
          const p = keys[(i * 10 + 3) % keys.length]!
          after.set(p, textEdits(before.get(p)!, 2000 + i, 3, 40))
        }
        return { before, after }
      },
    },
    {
      name: 'insert at start',
      what: `one ${s(30)} MiB binary file, 1 KiB inserted at offset 4 KiB + 123`,
      metricVariants: true,
      make() {
        const big = seededBytes(3001, s(30) * MiB)
        const at = 4 * KiB + 123
        const edited = Buffer.concat([big.subarray(0, at), seededBytes(3002, KiB), big.subarray(at)])
        return { before: new Map([['big.bin', big]]), after: new Map([['big.bin', edited]]) }
      },
    },
    {
      name: 'binary overwrites',
      what: `one ${s(50)} MiB binary file, 100 × 64 B overwritten at scattered offsets (same size)`,
      metricVariants: true,
      make() {
        const big = seededBytes(4001, s(50) * MiB)
        const edited = big.slice()
        const w = words32(4002, 100)
        for (let k = 0; k < 100; k++) edited.set(seededBytes(4100 + k, 64), w[k]! % (edited.length - 64))
        return { before: new Map([['disk.img', big]]), after: new Map([['disk.img', edited]]) }
      },
    },
    {
      name: 'log append',
      what: `a ${s(20)} MiB log, ${s(1)} MiB of lines appended`,
      metricVariants: true,
      make() {
        const head = seededLog(5001, 0, s(20) * MiB)
        const lines = new TextDecoder().decode(head).split('\n').length - 1
        const tail = seededLog(5001, lines, s(1) * MiB)
        return { before: new Map([['var/app.log', head]]), after: new Map([['var/app.log', Buffer.concat([head, tail])]]) }
      },
    },
    {
      name: 'renames/moves',
      what: `${s(200)} binary files × 64 KiB: half renamed in their folder, half moved to another`,
      metricVariants: false,
      make() {
        const n = s(200)
        const before: Tree = new Map()
        for (let i = 0; i < n; i++) before.set(`data/f${pad(i)}.bin`, seededBytes(6000 + i, 64 * KiB))
        const after: Tree = new Map()
        for (let i = 0; i < n; i++) {
          const data = before.get(`data/f${pad(i)}.bin`)!
          after.set(i % 2 === 0 ? `data/f${pad(i)}-renamed.bin` : `archive/2024/f${pad(i)}.bin`, data)
        }
        return { before, after }
      },
    },
    {
      name: 'rename + edit',
      what: `${s(200)} text files × 20 KiB: renamed (half) or moved (half), and 3 small edits each`,
      metricVariants: true,
      make() {
        const n = s(200)
        const before: Tree = new Map()
        for (let i = 0; i < n; i++) before.set(`notes/n${pad(i)}.txt`, seededText(7000 + i, 20 * KiB))
        const after: Tree = new Map()
        for (let i = 0; i < n; i++) {
          const data = textEdits(before.get(`notes/n${pad(i)}.txt`)!, 7500 + i, 3, 40)
          after.set(i % 2 === 0 ? `notes/n${pad(i)}-v2.txt` : `old/notes/n${pad(i)}.txt`, data)
        }
        return { before, after }
      },
    },
    {
      name: 'pieces of others',
      what: `${s(40)} binary files × 256 KiB, then ${s(40)} new ones: 160 KiB of one + 64 KiB of another + 32 KiB new`,
      metricVariants: true,
      make() {
        const n = s(40)
        const before: Tree = new Map()
        const src: Uint8Array[] = []
        for (let i = 0; i < n; i++) {
          src.push(seededBytes(8000 + i, 256 * KiB))
          before.set(`src/s${pad(i)}.bin`, src[i]!)
        }
        const after: Tree = new Map(before)
        const w = words32(8500, n * 4)
        for (let i = 0; i < n; i++) {
          // Offsets are not multiples of rsync's block size nor of dsync's chunks: a real merge.
          const a = src[w[i * 4]! % n]!
          const b = src[w[i * 4 + 1]! % n]!
          const oa = w[i * 4 + 2]! % (96 * KiB)
          const ob = w[i * 4 + 3]! % (192 * KiB)
          after.set(`merged/m${pad(i)}.bin`, Buffer.concat([a.subarray(oa, oa + 160 * KiB), b.subarray(ob, ob + 64 * KiB), seededBytes(8600 + i, 32 * KiB)]))
        }
        return { before, after }
      },
    },
    {
      name: 'unrelated new',
      what: `${s(10)} new files × 1 MiB of random bytes beside 10 old ones`,
      metricVariants: true,
      make() {
        const before: Tree = new Map()
        for (let i = 0; i < 10; i++) before.set(`old/o${pad(i)}.bin`, seededBytes(9000 + i, 256 * KiB))
        const after: Tree = new Map(before)
        for (let i = 0; i < s(10); i++) after.set(`new/r${pad(i)}.bin`, seededBytes(9100 + i, MiB))
        return { before, after }
      },
    },
    {
      name: 'no-op',
      what: `${s(20000)} small text files (200 B..2 KiB) in ${s(200)} folders, nothing changed`,
      metricVariants: false,
      seedByCopy: true,
      make() {
        const n = s(20000)
        const sizes = words32(9900, n)
        const before: Tree = new Map()
        for (let i = 0; i < n; i++) before.set(`t/d${pad(i % s(200))}/f${pad(i, 5)}.txt`, seededText(10_000 + i, 200 + (sizes[i]! % 1848)))
        return { before, after: before }
      },
    },
  ]
}
