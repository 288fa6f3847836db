import type { Database, RootDatabase } from 'lmdb'
import { ensureData } from '../errors.js'
import { parseFileDigest, randomHex } from '../hash/index.js'
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
/** meta keys `pairCover/<peer>`: see PairBases.cover */
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

  constructor(private readonly env: RootDatabase) {
    this.#db = env.openDB({ name: 'pair-bases', keyEncoding: 'ordered-binary' })
    this.#meta = env.openDB({ name: 'meta' })
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

  /**
   * Sets (a base) or removes (null) the bases of these paths with `peer`, in one transaction.
   * `cover`: the root summary (§4.9, hex) of the tree whose every entry the bases now are,
   * kept until the next change (see `cover`).
   */
  async update(peer: string, changes: ReadonlyMap<string, PairBase | null>, cover?: string): Promise<void> {
    if (changes.size === 0 && cover === undefined) return
    await this.env.childTransaction(() => {
      for (const [path, base] of changes) {
        if (base === null) this.#db.remove(`${peer}/${path}`)
        else this.#db.put(`${peer}/${path}`, encode(base))
      }
      if (cover !== undefined) this.#meta.put(`${COVER_PREFIX}${peer}`, cover)
      else this.#meta.remove(`${COVER_PREFIX}${peer}`)
    })
  }

  /** The root summary of the tree the bases with `peer` were last set from whole, if none
   *  changed since: a session with that tree, the same whole, has nothing to write (a no-op of
   *  1,000,000 files read a million bases to learn that). */
  cover(peer: string): string | undefined {
    return this.#meta.get(`${COVER_PREFIX}${peer}`)
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
