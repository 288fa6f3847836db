import type { Database, RootDatabase } from 'lmdb'
import { DsyncError } from '../errors.js'
import { atLevel, decodeSketch, encodeSketch, TopAnchors, type Sketch } from '../similarity/index.js'

/**
 * sif's index (Manber 1994, §3–4) over similarity sketches: path → (size, mtime, sketch), and an
 * inverted index from a sample of each sketch's anchors to the ids of the files holding them.
 * Four lmdb databases in the root's Store environment:
 *   sketch-files     path → u32 id, f64 size, f64 mtimeMs, encoded sketch
 *   sketch-paths     id → path
 *   sketch-postings  anchor key (u32) → ids (dupSort: a sorted set of 4-byte ids per key)
 *   sketch-meta      next id
 * A file posts the keys of its highest anchors (postedKeys): POSTED_MIN for a small file (about
 * what 1 anchor in 4 of its cut sketch was before; bench/sif-index.ts, 100,000 files of ~8 KiB:
 * 24 made the index 20% larger), one per POSTED_BYTES of a big one.
 */
export const POSTED_MIN = 16
/**
 * One posted anchor per 4 KiB of a big file. At one per 8 KiB, a 256 KiB file edited every ~100
 * bytes keeping a quarter of it (7% of its 64-byte windows left whole) was missed by its probe
 * 2 times in 5 (bench/seeds.ts, scattered at 25%): 32 keys on each side leave ~2 in common; 64
 * leave ~4 (all missed with probability ~2%). Small files post as many as before (~1 per 700 B).
 */
export const POSTED_BYTES = 4096

/**
 * A key held by more files than this says little about which files are similar (a license
 * header, a block of zeros) and would make groups quadratic: skipped when reading postings, as
 * the content index does (MAX_POSTINGS there).
 */
export const MAX_SKETCH_POSTINGS = 200

const HEADER = 20

/**
 * The index keeps each sketch cut to a coarser level: at most INDEX_ANCHORS anchors for a small
 * file, one per 2^INDEX_DENSE_LEVEL bytes of a big one. Full sketches (256–512 anchors, 8 bytes
 * each) made the index 93% of the data on 100,000 files of ~8 KiB (bench/sif-index.ts: lmdb
 * puts values over ~2 KB on overflow pages of their own). Cut: see bench/README.md. The cost is a
 * wider error bound on `similar` and `groups` (shown); `dsync similarity` and sync use full sketches.
 */
export const INDEX_ANCHORS = 96
export const INDEX_DENSE_LEVEL = 11

/** The sketch as the index keeps it. */
export function indexedSketch(s: Sketch): Sketch {
  const budget = Math.max(INDEX_ANCHORS, Math.ceil(s.size / 2 ** INDEX_DENSE_LEVEL))
  let level = s.level
  let n = s.short.length
  while (n > budget) {
    level++
    n = 0
    for (const h of s.short) if (Math.clz32(h) >= level) n++
  }
  return atLevel(s, level)
}

/** One indexed file. */
export interface IndexedSketch {
  readonly id: number
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
}

/** The posting key of an anchor: its long identity folded to 32 bits. */
function postingKey(short: number, prior: number): number {
  return (short ^ Math.imul(prior, 0x9e3779b1)) >>> 0
}

/**
 * A few posting keys to look a file up by (a probe: PROTOCOL.md §4.6): those of its `n` anchors
 * with the most leading zero bits, the ones an index posts first (postedKeys posts a file's
 * highest anchors), so a file holding that anchor has it posted unless it is far larger.
 * Distinct, highest level first.
 */
export function probeAnchorKeys(s: Sketch, n: number): number[] {
  const order = [...s.short.keys()].sort((a, b) => Math.clz32(s.short[b]!) - Math.clz32(s.short[a]!) || s.short[a]! - s.short[b]!)
  const keys = new Set<number>()
  for (const k of order) {
    keys.add(postingKey(s.short[k]!, s.prior[k]!))
    if (keys.size === n) break
  }
  return [...keys]
}

/** What finds probeAnchorKeys(sketch of a file, n) from the file's bytes, fed to it in order,
 *  without building the sketch (a probe needs only these keys: TopAnchors says why). Given the
 *  file's `size`, faster, and its finish() may ask for the bytes again (TopAnchors). */
export function probeAnchorFinder(n: number, opts: { kernel?: 'wasm' | 'js'; size?: number } = {}): TopAnchors {
  return new TopAnchors(n, postingKey, opts)
}

/** The keys a file is posted under: those of its highest anchors (probeAnchorKeys' order). */
function postedKeys(s: Sketch): number[] {
  return probeAnchorKeys(s, Math.max(POSTED_MIN, Math.ceil(s.size / POSTED_BYTES)))
}

/** The keys of every anchor of a sketch: a superset of what any rule has posted for it, so an
 *  entry made by an older dsync (another postedKeys) leaves no posting behind when it goes. */
function anchorKeys(s: Sketch): number[] {
  return Array.from(s.short, (short, k) => postingKey(short, s.prior[k]!))
}

export class SketchIndex {
  readonly #env: RootDatabase
  readonly #files: Database<Buffer, string>
  readonly #paths: Database<string, number>
  readonly #postings: Database<number, number>
  readonly #meta: Database<number, number>

  constructor(env: RootDatabase) {
    this.#env = env
    this.#files = env.openDB({ name: 'sketch-files', encoding: 'binary' })
    this.#paths = env.openDB({ name: 'sketch-paths', keyEncoding: 'uint32', encoding: 'string' })
    this.#postings = env.openDB({ name: 'sketch-postings', keyEncoding: 'uint32', dupSort: true, encoding: 'ordered-binary' })
    this.#meta = env.openDB({ name: 'sketch-meta', encoding: 'ordered-binary' })
  }

  /** The entry of `path`, or undefined (no sketch decoded: the quick check needs none). */
  lookup(path: string): IndexedSketch | undefined {
    const buf = this.#files.get(path)
    return buf === undefined ? undefined : { id: buf.readUInt32LE(0), path, size: buf.readDoubleLE(4), mtimeMs: buf.readDoubleLE(12) }
  }

  /** The sketch of the file with this id, or undefined when it is gone. */
  sketchOf(id: number): Sketch | undefined {
    const path = this.#paths.get(id)
    const buf = path === undefined ? undefined : this.#files.get(path)
    return buf === undefined ? undefined : decodeSketch(buf.subarray(HEADER))
  }

  pathOf(id: number): string | undefined {
    return this.#paths.get(id)
  }

  /** Every indexed path. */
  paths(): string[] {
    return [...this.#paths.getRange().map(({ value }) => value)]
  }

  /** Records many files in one transaction (one commit for the batch). */
  async putMany(entries: readonly { path: string; size: number; mtimeMs: number; sketch: Sketch }[]): Promise<void> {
    await this.#write(() => {
      for (const e of entries) this.#put(e.path, e.size, e.mtimeMs, e.sketch)
    })
  }

  #put(path: string, size: number, mtimeMs: number, full: Sketch): void {
    const sketch = indexedSketch(full)
    const old = this.#files.get(path)
    let id: number
    if (old !== undefined) {
      id = old.readUInt32LE(0)
      for (const key of anchorKeys(decodeSketch(old.subarray(HEADER)))) this.#postings.remove(key, id)
    } else {
      id = Number(this.#meta.get(0) ?? 1)
      this.#meta.put(0, id + 1)
      this.#paths.put(id, path)
    }
    // Format 1: the index keeps no exact windows (9 bytes an anchor; `similar` and `groups`
    // estimate as before from it, with their wider bound).
    const body = encodeSketch(sketch, 1)
    const buf = Buffer.allocUnsafe(HEADER + body.length)
    buf.writeUInt32LE(id, 0)
    buf.writeDoubleLE(size, 4)
    buf.writeDoubleLE(mtimeMs, 12)
    buf.set(body, HEADER)
    this.#files.put(path, buf)
    for (const key of postedKeys(sketch)) this.#postings.put(key, id)
  }

  /** Forgets these paths and their postings. */
  async removeMany(paths: readonly string[]): Promise<void> {
    await this.#write(() => {
      for (const path of paths) {
        const old = this.#files.get(path)
        if (old === undefined) continue
        const id = old.readUInt32LE(0)
        for (const key of anchorKeys(decodeSketch(old.subarray(HEADER)))) this.#postings.remove(key, id)
        this.#paths.remove(id)
        this.#files.remove(path)
      }
    })
  }

  /**
   * Ids of the files sharing posted anchors with `sketch`, with the number of keys shared, most
   * first: one lookup per anchor of the query (sif's one-against-all), never a scan.
   */
  candidates(sketch: Sketch): Map<number, number> {
    const keys: number[] = []
    for (let k = 0; k < sketch.short.length; k++) keys.push(postingKey(sketch.short[k]!, sketch.prior[k]!))
    return this.candidatesOfKeys(keys)
  }

  /** The files posted under `keys` (each key once), with how many of the keys each holds. */
  candidatesOfKeys(keys: Iterable<number>): Map<number, number> {
    const hits = new Map<number, number>()
    for (const key of new Set(keys)) {
      if (this.#postings.getValuesCount(key) > MAX_SKETCH_POSTINGS) continue
      for (const id of this.#postings.getValues(key)) hits.set(id, (hits.get(id) ?? 0) + 1)
    }
    return hits
  }

  /** Every posting list of 2..MAX_SKETCH_POSTINGS files (sif's Figure 1 sets), in key order. */
  *sharedLists(): Generator<number[]> {
    let list: number[] = []
    let current: number | undefined
    for (const { key, value } of this.#postings.getRange()) {
      if (key !== current) {
        if (list.length >= 2 && list.length <= MAX_SKETCH_POSTINGS) yield list
        list = []
        current = key
      }
      list.push(value)
    }
    if (list.length >= 2 && list.length <= MAX_SKETCH_POSTINGS) yield list
  }

  async #write(body: () => void): Promise<void> {
    try {
      await this.#env.childTransaction(body)
    } catch (err) {
      throw new DsyncError('IO', `cannot write the similarity index: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
    }
  }
}
