import type { Database } from 'lmdb'
import { ancestorDirs } from '../fs/index.js'
import { randomHex } from '../hash/index.js'
import { pathKey } from './path-key.js'

/** The store's `meta` database, where a set of covers keeps its generation. */
interface Meta {
  get(key: string): unknown
  put(key: string, value: string): unknown
  remove(key: string): unknown
}

/** A folder and its summary (§4.9), as covered. */
export type FolderSummary = readonly [dir: string, summary: Uint8Array]

/**
 * Covers of folders: for a folder ('' the root), the summary (§4.9) it had when every base
 * under it was last seen to be what the folder's entries say. A session that finds the folder
 * so again has nothing there to read or write. A no-op of 1,000,000 files read a million bases
 * to learn that, and one changed file made the next two sessions read them all.
 *
 * A base written or removed voids the covers of the folders it is in (`uncover`, in the write's
 * transaction). The covers count only while their generation (`generationKey` in `meta`) is
 * there: builds before the folder covers removed that key at every base write (it held their
 * one cover, of the whole tree), so a cover noted before such a write is of no use, never wrong.
 * One set of covers lives in `db` under `scope` (the tree's bases: '', a peer's pair bases: the
 * peer); its keys are the folders' as long paths are keyed, after the scope and a '/'.
 */
export class FolderCovers {
  constructor(
    private readonly db: Database<string, Buffer>,
    private readonly meta: Meta,
    private readonly generationKey: string,
    private readonly scope = '',
  ) {}

  /** Whether `dir`'s bases were all seen to at `summary`, and none written since. */
  covered(dir: string, summary: Uint8Array): boolean {
    const generation = this.#generation()
    return generation !== undefined && this.db.get(this.#key(dir)) === `${generation} ${hex(summary)}`
  }

  /** Notes these folders covered at their summaries. Inside a write's transaction. */
  cover(dirs: readonly FolderSummary[]): void {
    let generation = this.#generation()
    if (generation === undefined) {
      // Every cover noted so far is of no use now: they go (a tree's folders come and go).
      const scope = Buffer.from(this.scope)
      for (const key of this.db.getKeys(scope.length === 0 ? {} : { start: scope, end: Buffer.concat([scope, Buffer.of(0xff)]) })) this.db.remove(key)
      generation = randomHex(8)
      this.meta.put(this.generationKey, generation)
    }
    for (const [dir, summary] of dirs) this.db.put(this.#key(dir), `${generation} ${hex(summary)}`)
  }

  /** Bases under these paths were written or removed: the covers of their folders go. Inside
   *  the write's transaction. */
  uncover(paths: Iterable<string>): void {
    const seen = new Set<string>()
    for (const path of paths) {
      for (const dir of ancestorDirs(path)) {
        if (seen.has(dir)) break // and so are all above it
        seen.add(dir)
        this.db.remove(this.#key(dir))
      }
    }
  }

  /** Every cover of the scope and its generation go (the bases were reset). */
  clear(): void {
    this.meta.remove(this.generationKey)
  }

  #generation(): string | undefined {
    const stored = this.meta.get(this.generationKey)
    return typeof stored === 'string' ? stored : undefined
  }

  #key(dir: string): Buffer {
    return Buffer.concat([Buffer.from(this.scope), pathKey(`/${dir}`)])
  }
}

function hex(summary: Uint8Array): string {
  return Buffer.from(summary).toString('hex')
}
