import type { Database, RootDatabase } from 'lmdb'
import { ensureData } from '../errors.js'
import { ancestorDirs } from '../fs/index.js'
import { digestBytes, parseFileDigest, randomHex } from '../hash/index.js'
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
/** meta keys `pairCover/<peer>`: the generation of the covers with that peer (PairBases.covered);
 *  builds before the folder covers removed it at every change, voiding them */
const COVER_PREFIX = 'pairCover/'
/** Folders up to this many UTF-16 units are their own cover key; longer ones by their SHA-256
 *  (lmdb keys stop at 1978 bytes). */
const MAX_PLAIN_COVER_DIR = 512

/** The `pair-covers` key of `dir` ('' the root) with `peer`. */
function coverKey(peer: string, dir: string): string {
  return `${peer}/${dir.length <= MAX_PLAIN_COVER_DIR ? dir : `\0${digestBytes(Buffer.from(dir))}`}`
}


/**
 * The pair bases of one tree, for every peer replica it syncs with, in the store's lmdb
 * environment (`pair-bases`: key `peer/path`). A sync loads one peer's whole set (one range
 * read) and writes what changed in one transaction at the end, so a crash leaves the last
 * sync's set or the new one, never half.
 */
export class PairBases {
  readonly #db: Database<Stored, string>
  readonly #meta: Database<string, string>
  /** `peer/folder` → `generation summary` (covered) */
  readonly #covers: Database<string, string>

  constructor(private readonly env: RootDatabase) {
    this.#db = env.openDB({ name: 'pair-bases', keyEncoding: 'ordered-binary' })
    this.#meta = env.openDB({ name: 'meta' })
    this.#covers = env.openDB({ name: 'pair-covers', keyEncoding: 'ordered-binary', encoding: 'string' })
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
  async update(peer: string, changes: ReadonlyMap<string, PairBase | null>, covers: readonly (readonly [string, Uint8Array])[] = []): Promise<void> {
    if (changes.size === 0 && covers.length === 0) return
    await this.env.childTransaction(() => {
      const uncovered = new Set<string>()
      for (const [path, base] of changes) {
        if (base === null) this.#db.remove(`${peer}/${path}`)
        else this.#db.put(`${peer}/${path}`, encode(base))
        for (const dir of ancestorDirs(path)) {
          if (uncovered.has(dir)) break // and every folder above it
          uncovered.add(dir)
          this.#covers.remove(coverKey(peer, dir))
        }
      }
      if (covers.length > 0) this.#cover(peer, covers)
    })
  }

  /**
   * Whether the bases with `peer` of everything under `dir` ('' the root) were set from a
   * folder whose summary (§4.9) was `summary` (update's covers), with none of them changed since: a
   * session that finds the folder so again has nothing there to write. A no-op of 1,000,000
   * files read a million bases to learn that, and a change in one folder made the next two
   * sessions read them all.
   */
  covered(peer: string, dir: string, summary: Uint8Array): boolean {
    const generation = this.#meta.get(`${COVER_PREFIX}${peer}`)
    return generation !== undefined && this.#covers.get(coverKey(peer, dir)) === `${generation} ${Buffer.from(summary).toString('hex')}`
  }

  /** Notes, for each folder, that the bases with `peer` of everything under it are its entries,
   *  the folder's summary being the one given (see covered). Inside a transaction. */
  #cover(peer: string, dirs: readonly (readonly [string, Uint8Array])[]): void {
    let generation = this.#meta.get(`${COVER_PREFIX}${peer}`)
    if (generation === undefined) {
      // The covers noted before are of no use now: they go.
      for (const key of this.#covers.getKeys({ start: `${peer}/`, end: `${peer}0` })) this.#covers.remove(key)
      generation = randomHex(8)
      this.#meta.put(`${COVER_PREFIX}${peer}`, generation)
    }
    for (const [dir, summary] of dirs) this.#covers.put(coverKey(peer, dir), `${generation} ${Buffer.from(summary).toString('hex')}`)
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
