import { sha256OfStrings } from '../hash/index.js'
import { type TreeEntry, TreeListing } from '../fs/index.js'
import { LIMITS } from '../net/index.js'

/** What a directory's summary stands for: its hash, and the files under it (at any depth). */
interface DirSummary {
  readonly hash: Uint8Array
  readonly files: number
  readonly bytes: number
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
 *
 * It keeps a hash and two counts per directory and reads entries from the listing when asked:
 * a subtree the peer finds the same is settled from its counts, or walked entry by entry,
 * never held whole.
 */
export class TreeSummary {
  readonly #dirs = new Map<string, DirSummary>()

  private constructor(private readonly listing: TreeListing) {}

  /** Summarizes `entries` (any order; every parent directory listed, or the root). */
  static of(entries: Iterable<TreeEntry>): TreeSummary {
    return TreeSummary.from(TreeListing.of(entries))
  }

  /** Summarizes a walked tree. */
  static from(listing: TreeListing): TreeSummary {
    const s = new TreeSummary(listing)
    // Deepest first: a directory's hash needs its subdirectories'.
    const dirs = [...listing.dirs()].sort((a, b) => depth(b) - depth(a))
    for (const dir of dirs) {
      let files = 0
      let bytes = 0
      const records: string[] = []
      // Name order by UTF-16 code units, as the summaries of every version were hashed.
      for (const e of listing.children(dir).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
        records.push(s.#record(e))
        if (e.kind === 'file') {
          files++
          bytes += e.size
        } else if (e.kind === 'dir') {
          const sub = s.#dirs.get(e.path)
          files += sub?.files ?? 0
          bytes += sub?.bytes ?? 0
        }
      }
      s.#dirs.set(dir, { hash: sha256OfStrings(records).subarray(0, LIMITS.summaryHashBytes), files, bytes })
    }
    return s
  }

  /** One entry's part of its directory's hash. NUL never occurs in a name or a target. */
  #record(e: TreeEntry): string {
    const name = e.path.slice(e.path.lastIndexOf('/') + 1)
    if (e.kind === 'file') return `f\0${name}\0${e.size}\0${Math.floor(e.mtimeMs)}\0${e.mode}\0`
    if (e.kind === 'symlink') return `l\0${name}\0${e.target ?? ''}\0`
    // A directory the walk could not list has no summary of its own: an empty one's.
    const hash = this.#dirs.get(e.path)?.hash ?? EMPTY
    return `d\0${name}\0${e.mode}\0${Math.floor(e.mtimeMs)}\0${Buffer.from(hash).toString('hex')}\0`
  }

  /** The summary of directory `dir` ('' the root), or undefined for no directory of the tree. */
  hash(dir: string): Uint8Array | undefined {
    return this.#dirs.get(dir)?.hash
  }

  /** The regular files under `dir` (at any depth) and their bytes: zeros for no directory. */
  totals(dir: string): { files: number; bytes: number } {
    const d = this.#dirs.get(dir)
    return { files: d?.files ?? 0, bytes: d?.bytes ?? 0 }
  }

  /** True when nothing is directly in `dir` (or it is no directory of the tree). */
  empty(dir: string): boolean {
    return this.listing.count(dir) === 0
  }

  /** The entries directly in `dir`, in name order (none for no directory of the tree). */
  children(dir: string): TreeEntry[] {
    return this.listing.children(dir)
  }

  /** The entry at `path`, or undefined for none. */
  entry(path: string): TreeEntry | undefined {
    return this.listing.get(path)
  }

  /** Every entry under `dir`, each directory before what it holds. */
  under(dir: string): Generator<TreeEntry> {
    return this.listing.under(dir)
  }
}

/** The summary of a directory with nothing in it. */
const EMPTY = sha256OfStrings([]).subarray(0, LIMITS.summaryHashBytes)

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
