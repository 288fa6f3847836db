/**
 * Edited pairs with a known truth, for bench/accuracy.ts (issue 10). B is built from A as a
 * list of segments (copied from A, or new); the truth is measured on the bytes, not taken from
 * the recipe: a byte of X is shared when it lies in a substring of ≥ 64 bytes that Y holds
 * (every 64-byte window of Y in a set, every window of X looked up). Only the LCS truth uses
 * the recipe: the heaviest chain of copied segments in order in both files.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { lcsWeight } from '../../src/similarity/index.js'
import { seededBytes, xorshift32 } from './data.js'

export type PatternName = 'prefix' | 'scattered' | 'insertions' | 'reorder'
export const PATTERNS: readonly PatternName[] = ['prefix', 'scattered', 'insertions', 'reorder']
export type DataKind = 'random' | 'text'

/** A piece of B: `len` bytes copied from A at `src`, or new bytes (src = −1). */
interface Segment {
  readonly src: number
  readonly len: number
}

export interface EditedPair {
  readonly a: Uint8Array
  readonly b: Uint8Array
  /** truth, 0..1: share of A's bytes in B, of B's bytes in A; dice, jaccard, lcs as DESIGN.md */
  readonly covA: number
  readonly covB: number
  readonly dice: number
  readonly jaccard: number
  readonly lcs: number
}

const WINDOW = 64

/**
 * The text pairs are cut from the repository's own sources and docs (code and prose), as they
 * were at one fixed commit: read from the working tree, every commit changed the corpus and so
 * the figures (scattered MAE 2.4–3.1 over five runs of the same sketch code); pinned, runs at
 * different commits compare. Falls back to the working tree (and says so) without git history.
 */
export const CORPUS_COMMIT = '9caf8c9642409c76b772210765bb7e514b791c0b'
const CORPUS_DIRS = ['src', 'test', 'bench', 'protocol']
const isCorpusFile = (path: string): boolean => /\.(ts|md)$/.test(path)

let corpusSource = ''
/** Where the text corpus came from, for the bench's header. */
export function corpusOrigin(): string {
  return corpusSource
}

function corpus(): Uint8Array {
  const root = fileURLToPath(new URL('../../../', import.meta.url))
  try {
    return pinnedCorpus(root)
  } catch (e) {
    corpusSource = `working tree (commit ${CORPUS_COMMIT.slice(0, 7)} not readable: ${(e as Error).message.split('\n')[0]})`
    return workingTreeCorpus(root)
  }
}

/** The corpus files at CORPUS_COMMIT, in path order (git sorts ls-tree by path). */
function pinnedCorpus(root: string): Uint8Array {
  const git = (args: string[], input?: string): Buffer =>
    execFileSync('git', ['-C', root, ...args], { input, maxBuffer: 256 * 1024 * 1024, stdio: ['pipe', 'pipe', 'pipe'] })
  const listing = git(['ls-tree', '-r', CORPUS_COMMIT, '--', ...CORPUS_DIRS, 'README.md']).toString()
  const ids = listing.split('\n').flatMap((line) => {
    const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/.exec(line)
    return m !== null && isCorpusFile(m[2]) ? [m[1]] : []
  })
  const out = git(['cat-file', '--batch'], ids.join('\n') + '\n')
  const parts: Buffer[] = []
  let at = 0
  for (const id of ids) {
    const nl = out.indexOf(10, at)
    const [oid, , size] = out.subarray(at, nl).toString().split(' ')
    if (oid !== id) throw new Error(`git cat-file: expected ${id}, got ${oid}`)
    parts.push(out.subarray(nl + 1, nl + 1 + Number(size)))
    at = nl + 1 + Number(size) + 1
  }
  const text = Buffer.concat(parts)
  corpusSource = `sources at ${CORPUS_COMMIT.slice(0, 7)}, ${ids.length} files, ${text.length} bytes`
  return text
}

function workingTreeCorpus(root: string): Uint8Array {
  const parts: Buffer[] = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (isCorpusFile(name)) parts.push(readFileSync(p))
    }
  }
  for (const d of CORPUS_DIRS) walk(join(root, d))
  parts.push(readFileSync(join(root, 'README.md')))
  return Buffer.concat(parts)
}

/** `n` bytes of text: the corpus from a seeded offset, repeated if short. */
function textBytes(text: Uint8Array, seed: number, n: number): Uint8Array {
  const out = new Uint8Array(n)
  let pos = xorshift32(seed)() % text.length
  for (let o = 0; o < n; ) {
    const take = Math.min(n - o, text.length - pos)
    out.set(text.subarray(pos, pos + take), o)
    o += take
    pos = 0
  }
  return out
}

/** New text-like bytes: corpus lines in a seeded random order (what an edit of text adds). */
function newText(text: Uint8Array, seed: number, n: number): Uint8Array {
  const next = xorshift32(seed)
  const out = new Uint8Array(n)
  for (let o = 0; o < n; ) {
    let s = next() % text.length
    while (s > 0 && text[s - 1] !== 10) s--
    let e = s
    while (e < text.length && text[e] !== 10 && e - s < 120) e++
    const line = text.subarray(s, Math.min(e + 1, text.length, s + n - o))
    if (line.length === 0) continue
    out.set(line, o)
    o += line.length
  }
  return out
}

/** The recipe of each pattern: segments of B for a kept share `keep` of A (of B, for insertions). */
function recipe(pattern: PatternName, size: number, keep: number, seed: number): Segment[] {
  const next = xorshift32(seed)
  const segs: Segment[] = []
  if (pattern === 'prefix') {
    const cut = Math.round(size * (1 - keep))
    return [{ src: -1, len: cut }, { src: cut, len: size - cut }]
  }
  if (pattern === 'scattered') {
    // Edits of 1–200 bytes (replace, insert or delete), spaced so that `keep` of A survives.
    const meanEdit = 100
    const gap = Math.max(WINDOW, Math.round((meanEdit * keep) / (1 - keep)))
    let pos = 0
    while (pos < size) {
      const run = Math.min(size - pos, Math.round(gap * (0.5 + (next() % 1000) / 1000)))
      segs.push({ src: pos, len: run })
      pos += run
      const len = 1 + (next() % (2 * meanEdit - 1))
      const kind = next() % 3
      if (kind !== 2) segs.push({ src: -1, len }) // replace or insert
      if (kind !== 1) pos += len // replace or delete
    }
    return segs
  }
  if (pattern === 'insertions') {
    // All of A, with new blocks of 64 B–2 KiB inserted until `keep` of B is A's.
    const extra = (size * (1 - keep)) / keep
    const blocks = Math.max(1, Math.round(extra / 1024))
    const at = Array.from({ length: blocks }, () => next() % size).sort((x, y) => x - y)
    let pos = 0
    for (let k = 0; k < blocks; k++) {
      segs.push({ src: pos, len: at[k]! - pos })
      segs.push({ src: -1, len: Math.max(1, Math.round(extra / blocks)) })
      pos = at[k]!
    }
    segs.push({ src: pos, len: size - pos })
    return segs.filter((s) => s.len > 0)
  }
  // reorder: A in blocks of 256 B–4 KiB (under a transfer chunk); `keep` of them keep their
  // order, the rest move to seeded places. Every byte is kept; only the order changes.
  let pos = 0
  const blocks: Segment[] = []
  while (pos < size) {
    const len = Math.min(size - pos, 256 + (next() % 3840))
    blocks.push({ src: pos, len })
    pos += len
  }
  const moved = blocks.filter(() => next() % 1000 >= keep * 1000)
  const stay = blocks.filter((b) => !moved.includes(b))
  for (const m of moved) stay.splice(next() % (stay.length + 1), 0, m)
  return stay
}

function assemble(a: Uint8Array, segs: readonly Segment[], fresh: (seed: number, n: number) => Uint8Array, seed: number): Uint8Array {
  return Buffer.concat(segs.map((s, k) => (s.src >= 0 ? a.subarray(s.src, s.src + s.len) : fresh(seed * 7919 + k, s.len))))
}

/** Rolling 53-bit key of every 64-byte window (two Rabin–Karp sums mod 2^31 − 1 and 10^9 + 7). */
function windowKeys(x: Uint8Array, visit: (end: number, key: number) => void): void {
  const P1 = 2147483647
  const P2 = 1000000007
  const B = 257
  let pow1 = 1
  let pow2 = 1
  for (let i = 0; i < WINDOW - 1; i++) {
    pow1 = (pow1 * B) % P1
    pow2 = (pow2 * B) % P2
  }
  let h1 = 0
  let h2 = 0
  for (let i = 0; i < x.length; i++) {
    if (i >= WINDOW) {
      h1 = (h1 - (((x[i - WINDOW]! + 1) * pow1) % P1) + P1) % P1
      h2 = (h2 - (((x[i - WINDOW]! + 1) * pow2) % P2) + P2) % P2
    }
    h1 = (h1 * B + x[i]! + 1) % P1
    h2 = (h2 * B + x[i]! + 1) % P2
    if (i >= WINDOW - 1) visit(i, h1 * 0x400000 + (h2 & 0x3fffff))
  }
}

/** Share of X's bytes inside some 64-byte window that Y holds. */
export function coveredShare(x: Uint8Array, y: Uint8Array): number {
  const keys = new Set<number>()
  windowKeys(y, (_, k) => keys.add(k))
  let covered = 0
  let reach = -1 // bytes of X before this index are counted already
  windowKeys(x, (end, k) => {
    if (!keys.has(k)) return
    covered += end + 1 - Math.max(reach, end + 1 - WINDOW)
    reach = end + 1
  })
  return x.length === 0 ? 1 : covered / x.length
}

/** Bytes of the heaviest chain of copied segments (≥ 64 bytes) in order in both files. */
function chainBytes(segs: readonly Segment[]): number {
  const copied = segs.filter((s) => s.src >= 0 && s.len >= WINDOW)
  const key = (s: Segment): string => (s.src * 2654435761 >>> 0).toString(16).padStart(8, '0') + s.src.toString(16)
  const inA = [...copied].sort((x, y) => x.src - y.src).map((s) => ({ length: s.len, fp: key(s) }))
  return lcsWeight(inA, copied.map((s) => ({ length: s.len, fp: key(s) })))
}

/** The text corpus, read once per run (the caller keeps it). */
export function loadCorpus(): Uint8Array {
  return corpus()
}

/** An edited pair of `size` bytes (A) with the truth measured on its bytes. */
export function editedPair(pattern: PatternName, kind: DataKind, size: number, keep: number, seed: number, text: Uint8Array): EditedPair {
  const a = kind === 'random' ? seededBytes(seed, size) : textBytes(text, seed, size)
  const fresh = kind === 'random' ? seededBytes : (s: number, n: number) => newText(text, s, n)
  const segs = recipe(pattern, size, keep, seed + 1)
  const b = assemble(a, segs, fresh, seed + 2)
  const covA = coveredShare(a, b)
  const covB = coveredShare(b, a)
  const dice = (covA * a.length + covB * b.length) / (a.length + b.length)
  const lcs = Math.min(dice, (2 * chainBytes(segs)) / (a.length + b.length))
  return { a, b, covA, covB, dice, jaccard: dice / (2 - dice), lcs }
}
