import type { Database, RootDatabase } from 'lmdb'
import { ensureData } from '../errors.js'
import { parseFileDigest, randomHex } from '../hash/index.js'
import { FolderCovers, type FolderSummary } from './folder-covers.js'
import type { FileDigest } from '../types.js'

/**
 * What a path was, on this side, when this tree last synced with one peer replica (two-way
 * `dsync sync`). Unison calls it the archive; Syncthing the index of the last agreed version.
 * "Changed since the last sync" is this side's current entry against it; a file is the same
 * when its size and mtime are (rsync's quick check) or, both known, its digest; its mode and a
 * symlink's target count too.
 */
export interface PairBase {
  readonly kind: 'file' | 'dir' | 'symlink'
  readonly size: number
  readonly mtimeMs: number
  readonly mode: number
  readonly digest?: FileDigest
  readonly target?: string
}

type Stored = [kind: number, size: number, mtimeMs: number, mode: number, digest: string | null, target: string | null]
const KINDS = ['file', 'dir', 'symlink'] as const

/** The replica id of a tree: 32 hex digits made once (`replica` in the store's meta). */
const REPLICA_KEY = 'replica'
/** meta keys `pairCover/<peer>`: the generation of the covers with that peer (FolderCovers) */
const COVER_PREFIX = 'pairCover/'

/**
 * The pair bases of one tree, for every peer replica it syncs with, in the store's lmdb
 * environment (`pair-bases`: key `peer/path`). A sync loads one peer's whole set (one range
 * read) and writes what changed in one transaction at the end, so a crash leaves the last
 * sync's set or the new one, never half.
 */
export class PairBases {
  readonly #db: Database<Stored, string>
  readonly #meta: Database<string, string>
  /** every peer's folder covers, each under its peer (FolderCovers' scope) */
  readonly #covers: Database<string, Buffer>

  constructor(private readonly env: RootDatabase) {
    this.#db = env.openDB({ name: 'pair-bases', keyEncoding: 'ordered-binary' })
    this.#meta = env.openDB({ name: 'meta' })
    this.#covers = env.openDB({ name: 'pair-covers', keyEncoding: 'binary', encoding: 'string' })
  }

  /** This tree's replica id, made (and stored) the first time it is asked for: `proposed` when
   *  given (an id a client announced before its store existed). */
  async replicaId(proposed?: string): Promise<string> {
    const known = this.#meta.get(REPLICA_KEY)
    if (known !== undefined) return known
    const id = proposed ?? newReplicaId()
    let chosen = id
    await this.env.childTransaction(() => {
      const raced = this.#meta.get(REPLICA_KEY)
      if (raced !== undefined) chosen = raced
      else this.#meta.put(REPLICA_KEY, id)
    })
    return chosen
  }

  /** The stored replica id, if the tree has one yet (nothing is written). */
  peekReplicaId(): string | undefined {
    return this.#meta.get(REPLICA_KEY)
  }

  /** `path`'s base with `peer`, if it has one. */
  get(peer: string, path: string): PairBase | undefined {
    const v = this.#db.get(`${peer}/${path}`)
    return v === undefined ? undefined : decode(path, v)
  }

  /** Every path's base with `peer`. */
  load(peer: string): Map<string, PairBase> {
    const prefix = `${peer}/`
    const out = new Map<string, PairBase>()
    for (const { key, value } of this.#db.getRange({ start: prefix, end: `${peer}0` })) {
      const path = key.slice(prefix.length)
      out.set(path, decode(path, value))
    }
    return out
  }

  /** Sets (a base) or removes (null) the bases of these paths with `peer`, in one transaction:
   *  the covers of the folders they are in go (see covered); then, in it too, the `covers` of
   *  folders whose bases are now their entries are noted (one commit, not two, while the
   *  session still holds the tree). */
  async update(peer: string, changes: ReadonlyMap<string, PairBase | null>, covers: readonly FolderSummary[] = []): Promise<void> {
    if (changes.size === 0 && covers.length === 0) return
    const folders = this.#coversOf(peer)
    await this.env.childTransaction(() => {
      for (const [path, base] of changes) {
        if (base === null) this.#db.remove(`${peer}/${path}`)
        else this.#db.put(`${peer}/${path}`, encode(base))
      }
      folders.uncover(changes.keys())
      if (covers.length > 0) folders.cover(covers)
    })
  }

  /** Whether the bases with `peer` of everything under `dir` ('' the root) were set from a
   *  folder whose summary (§4.9) was `summary` (update's covers), with none of them changed
   *  since (FolderCovers): a session that finds the folder so again has nothing there to write. */
  covered(peer: string, dir: string, summary: Uint8Array): boolean {
    return this.#coversOf(peer).covered(dir, summary)
  }

  #coversOf(peer: string): FolderCovers {
    return new FolderCovers(this.#covers, this.#meta, `${COVER_PREFIX}${peer}`, peer)
  }
}

/** A fresh replica id: 128 random bits as 32 hex digits. */
export function newReplicaId(): string {
  return randomHex(16)
}

function encode(b: PairBase): Stored {
  return [KINDS.indexOf(b.kind), b.size, b.mtimeMs, b.mode, b.digest ?? null, b.target ?? null]
}

function decode(path: string, v: Stored): PairBase {
  ensureData(Array.isArray(v) && v.length === 6, `state store: the pair base of ${path} has an unknown format`)
  const kind = KINDS[v[0]]
  ensureData(kind !== undefined, `state store: the pair base of ${path} has an unknown kind`)
  const digest = v[4] === null ? undefined : parseFileDigest(v[4])
  return {
    kind, size: v[1], mtimeMs: v[2], mode: v[3],
    ...(digest !== undefined && { digest }),
    ...(v[5] !== null && { target: v[5] }),
  }
}
