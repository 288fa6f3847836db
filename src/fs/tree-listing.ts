import { comparePaths, parentDir, type TreeEntry } from './tree-entry.js'
import { walkDirs, type WalkOptions } from './walk.js'

const KINDS = ['file', 'dir', 'symlink'] as const
const KIND_CODE: Readonly<Record<TreeEntry['kind'], number>> = { file: 0, dir: 1, symlink: 2 }

/** One directory's entries: rows `start` to `start + count` of the listing's columns. */
interface Block {
  readonly dir: string
  readonly start: number
  readonly count: number
  /** the names end to end; row r's from its nameAt to the next row's (the block's last: the end) */
  readonly names: string
}

/** Rows of a page of columns: 4,096 (~92 KB). */
const PAGE_SHIFT = 12
const PAGE_MASK = (1 << PAGE_SHIFT) - 1

/** A page of the listing's columns. */
interface Page {
  /** where each row's name starts in its block's `names` */
  readonly nameAt: Uint32Array
  readonly kinds: Uint8Array
  readonly sizes: Float64Array
  readonly mtimes: Float64Array
  /** permission bits (st_mode & 0o7777) */
  readonly modes: Uint16Array
}

function newPage(): Page {
  const n = 1 << PAGE_SHIFT
  return { nameAt: new Uint32Array(n), kinds: new Uint8Array(n), sizes: new Float64Array(n), mtimes: new Float64Array(n), modes: new Uint16Array(n) }
}

/**
 * A walked tree kept as columns, a block of rows per directory: its entries' names end to end in
 * one string, their kinds, sizes, times and modes in typed arrays (~25 bytes a file and its
 * name). An object per entry, its path and a Map slot cost ~200 bytes a file (a no-op of
 * 1,000,000 files held 426 / 519 MB on the two sides, most of it this, the goal being 150 MiB);
 * entries are made when asked for, and are garbage once used.
 *
 * What it holds does not change once walked: a session's own writes are kept beside it
 * (LocalFiles).
 */
export class TreeListing {
  readonly #blocks = new Map<string, Block>()
  #rows = 0
  /** the columns, in pages of PAGE_ROWS rows: a tree grows by pages, never copied (doubled
   *  arrays held the old copies until a full collection, ~1× the columns more at 1,000,000) */
  readonly #pages: Page[] = []
  /** symlink targets by row */
  readonly #targets = new Map<number, string>()

  /** Walks `root` as walkTree does (metadata only), a directory at a time. */
  static async walk(root: string, opts: WalkOptions = {}): Promise<TreeListing> {
    const listing = new TreeListing()
    for await (const { dir, entries } of walkDirs(root, opts)) listing.#add(dir, entries)
    return listing
  }

  /** A listing of `entries`, in any order (each under its parent; every directory named by an
   *  entry of kind `dir` has a block, empty or not). */
  static of(entries: Iterable<TreeEntry>): TreeListing {
    const byDir = new Map<string, TreeEntry[]>([['', []]])
    for (const e of entries) {
      if (e.kind === 'dir' && !byDir.has(e.path)) byDir.set(e.path, [])
      const dir = parentDir(e.path)
      const list = byDir.get(dir)
      if (list === undefined) byDir.set(dir, [e])
      else list.push(e)
    }
    const listing = new TreeListing()
    for (const [dir, list] of byDir) listing.#add(dir, list.sort((a, b) => comparePaths(a.path, b.path)))
    return listing
  }

  /** `entries`: the directory's, in comparePaths order (walkDirs gives them so). */
  #add(dir: string, entries: readonly TreeEntry[]): void {
    if (this.#blocks.has(dir)) return
    const start = this.#rows
    const names: string[] = []
    let at = 0
    for (const e of entries) {
      const r = this.#rows++
      if ((r & PAGE_MASK) === 0) this.#pages.push(newPage())
      const p = this.#pages[r >>> PAGE_SHIFT]!
      const i = r & PAGE_MASK
      const name = e.path.slice(dir === '' ? 0 : dir.length + 1)
      names.push(name)
      p.nameAt[i] = at
      at += name.length
      p.kinds[i] = KIND_CODE[e.kind]
      p.sizes[i] = e.size
      p.mtimes[i] = e.mtimeMs
      p.modes[i] = e.mode
      if (e.target !== undefined) this.#targets.set(r, e.target)
    }
    this.#blocks.set(dir, { dir, start, count: entries.length, names: names.join('') })
  }

  /** Entries in all. */
  get size(): number {
    return this.#rows
  }

  /** The directories listed ('' the root first), in the order the walk read them. */
  dirs(): IterableIterator<string> {
    return this.#blocks.keys()
  }

  #nameAt(r: number): number {
    return this.#pages[r >>> PAGE_SHIFT]!.nameAt[r & PAGE_MASK]!
  }

  #name(b: Block, i: number): string {
    const r = b.start + i
    return b.names.slice(this.#nameAt(r), i + 1 < b.count ? this.#nameAt(r + 1) : b.names.length)
  }

  #entry(b: Block, i: number): TreeEntry {
    const r = b.start + i
    const p = this.#pages[r >>> PAGE_SHIFT]!
    const k = r & PAGE_MASK
    const name = this.#name(b, i)
    const kind = KINDS[p.kinds[k]!]!
    const e = { path: b.dir === '' ? name : `${b.dir}/${name}`, kind, size: p.sizes[k]!, mtimeMs: p.mtimes[k]!, mode: p.modes[k]! }
    const target = kind === 'symlink' ? this.#targets.get(r) : undefined
    return target === undefined ? e : { ...e, target }
  }

  /** How many entries are directly in `dir` (0 for a directory not listed). */
  count(dir: string): number {
    return this.#blocks.get(dir)?.count ?? 0
  }

  /** The entries directly in `dir`, in comparePaths order (none for a directory not listed). */
  children(dir: string): TreeEntry[] {
    const b = this.#blocks.get(dir)
    const out: TreeEntry[] = []
    if (b !== undefined) for (let i = 0; i < b.count; i++) out.push(this.#entry(b, i))
    return out
  }

  /** The entry at `path`, or undefined: a binary search of its directory's names. */
  get(path: string): TreeEntry | undefined {
    const b = this.#blocks.get(parentDir(path))
    if (b === undefined) return undefined
    const name = path.slice(path.lastIndexOf('/') + 1)
    let lo = 0
    let hi = b.count
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const c = comparePaths(this.#name(b, mid), name)
      if (c === 0) return this.#entry(b, mid)
      if (c < 0) lo = mid + 1
      else hi = mid
    }
    return undefined
  }

  /** Every entry below `dir` ('' the whole tree) in walk order: depth first, comparePaths order,
   *  each directory right before what it holds. */
  *under(dir = ''): Generator<TreeEntry> {
    const top = this.#blocks.get(dir)
    if (top === undefined) return
    const stack: { b: Block; i: number }[] = [{ b: top, i: 0 }]
    while (stack.length > 0) {
      const f = stack[stack.length - 1]!
      if (f.i >= f.b.count) {
        stack.pop()
        continue
      }
      const e = this.#entry(f.b, f.i++)
      yield e
      if (e.kind !== 'dir') continue
      const b = this.#blocks.get(e.path)
      if (b !== undefined) stack.push({ b, i: 0 })
    }
  }
}
