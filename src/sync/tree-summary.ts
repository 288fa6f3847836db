import { sha256OfStrings } from '../hash/index.js'
import type { TreeEntry } from '../fs/index.js'
import { LIMITS } from '../net/index.js'

/** The relative parent of a relative path: '' for a top-level name. */
export function parentDir(path: string): string {
  const i = path.lastIndexOf('/')
  return i < 0 ? '' : path.slice(0, i)
}

/**
 * Per-directory summaries of a tree (PROTOCOL.md §4.9), as TAPER prunes identical subtrees: a
 * directory's summary is a hash over its entries, in name order — each one's name and kind; a
 * file's size, mtime and mode; a symlink's target; a subdirectory's mode, mtime and summary —
 * so two trees whose root summaries are equal list the same entries, and the sender need list
 * none. Exactly what the receiver compares and sets of a listed entry, no more: a symlink's
 * mode and time are left out (the receiver never sets them).
 *
 * Times are hashed to the millisecond (floored): equal there, two times are equal to the quick
 * check (within 1 ms), so a summary never hides what a listing would show. Times set by a
 * receiver read back in the millisecond they were set in (stableUtime, src/fs); a directory's
 * is set again after the session's writes in it, which only a listed directory sees.
 */
export class TreeSummary {
  readonly #children = new Map<string, TreeEntry[]>()
  readonly #hashes = new Map<string, Uint8Array>()

  private constructor() {}

  /** Summarizes `entries` (any order; every parent directory listed, or the root). */
  static of(entries: Iterable<TreeEntry>): TreeSummary {
    const s = new TreeSummary()
    s.#children.set('', [])
    const all: TreeEntry[] = []
    for (const e of entries) {
      all.push(e)
      if (e.kind === 'dir' && !s.#children.has(e.path)) s.#children.set(e.path, [])
    }
    for (const e of all) {
      const parent = parentDir(e.path)
      let list = s.#children.get(parent)
      if (list === undefined) s.#children.set(parent, (list = []))
      list.push(e)
    }
    // Deepest first: a directory's hash needs its subdirectories'.
    const dirs = [...s.#children.keys()].sort((a, b) => depth(b) - depth(a))
    for (const dir of dirs) {
      const list = s.#children.get(dir)!
      list.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      s.#hashes.set(dir, sha256OfStrings(list.map((e) => s.#record(e))).subarray(0, LIMITS.summaryHashBytes))
    }
    return s
  }

  /** One entry's part of its directory's hash. NUL never occurs in a name or a target. */
  #record(e: TreeEntry): string {
    const name = e.path.slice(e.path.lastIndexOf('/') + 1)
    if (e.kind === 'file') return `f\0${name}\0${e.size}\0${Math.floor(e.mtimeMs)}\0${e.mode}\0`
    if (e.kind === 'symlink') return `l\0${name}\0${e.target ?? ''}\0`
    return `d\0${name}\0${e.mode}\0${Math.floor(e.mtimeMs)}\0${Buffer.from(this.#hashes.get(e.path)!).toString('hex')}\0`
  }

  /** The summary of directory `dir` ('' the root), or undefined for no directory of the tree. */
  hash(dir: string): Uint8Array | undefined {
    return this.#hashes.get(dir)
  }

  /** The entries directly in `dir`, in name order (none for no directory of the tree). */
  children(dir: string): readonly TreeEntry[] {
    return this.#children.get(dir) ?? []
  }

  /** Every entry under `dir`, each directory before what it holds. */
  *under(dir: string): Generator<TreeEntry> {
    const stack = [...this.children(dir)].reverse()
    while (stack.length > 0) {
      const e = stack.pop()!
      yield e
      if (e.kind === 'dir') for (let i = this.children(e.path).length - 1; i >= 0; i--) stack.push(this.children(e.path)[i]!)
    }
  }
}

function depth(path: string): number {
  if (path === '') return 0
  let n = 1
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) n++
  return n
}

/** Equal summaries (16 bytes each). */
export function sameSummary(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b)
}
