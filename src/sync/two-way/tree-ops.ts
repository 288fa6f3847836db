import { link, lstat, mkdir, readlink, rm, rmdir, unlink } from 'node:fs/promises'
import { dirname, posix } from 'node:path'
import { DsyncError, isDsyncError } from '../../errors.js'
import { asFileError, resolveInside, syncDirectory } from '../../fs/index.js'
import type { FileEntry, StateEntry } from '../../net/index.js'
import { sameMtime, type PairBase, type SyncBase } from '../../store/index.js'
import type { LocalFiles } from '../local-files.js'
import type { FileEvent } from '../report.js'
import { baseOf, sameVersion, type Version } from './changes.js'
import type { Move } from './reconcile.js'

/**
 * What one side of a two-way sync does to its own tree besides receiving files: the moves
 * (renames made on the other side, and conflict copies) before the transfers, the deletions
 * after them, and the pair bases at the end. Each is checked against what this side listed:
 * a file changed since (the user kept working during the sync) is left alone and reported,
 * never moved over or deleted.
 */
export class TreeOps {
  /** this side's versions as listed, re-keyed by the moves made: what it has, for the plan */
  readonly #mine = new Map<string, Version>()
  /** paths whose outcome this session cannot vouch for: their bases stay as they were */
  readonly #unsure = new Set<string>()
  readonly #deleted = new Set<string>()
  /** entries received from the peer and written here */
  readonly #received = new Map<string, FileEntry>()

  constructor(
    private readonly root: string,
    private readonly files: LocalFiles,
    state: readonly StateEntry[],
    private readonly event: (e: FileEvent) => void,
  ) {
    for (const e of state) if (e.status !== 'deleted') this.#mine.set(e.path, e)
  }

  /** The version a received file may replace without a conflict (the receiver's `baseOf`). */
  expected(path: string): SyncBase | undefined {
    const v = this.#mine.get(path)
    return v === undefined || v.kind !== 'file' ? undefined : { size: v.size, mtimeMs: v.mtimeMs, ...(v.digest !== undefined && { digest: v.digest }) }
  }

  /** A peer's entry this side received (tapped from the phase's file list). */
  received(e: FileEntry): void {
    this.#received.set(e.path, e)
  }

  /** A path whose outcome failed or was refused (events with action error or kept). */
  unsure(path: string): void {
    this.#unsure.add(path)
  }

  /** Renames and conflict copies, before any transfer. A move never replaces a file. */
  async move(moves: readonly Move[]): Promise<void> {
    const dirs = new Set<string>()
    for (const m of moves) {
      try {
        const from = await resolveInside(this.root, m.from, { allowFinalSymlink: true })
        const v = this.#mine.get(m.from)
        if (v === undefined || v.kind === 'dir' || !(await this.#isListed(from, v))) {
          throw new DsyncError('CHANGED_ON_RECEIVER', `${m.from}: changed during the sync; not moved to ${m.to} (sync again)`, { path: m.from })
        }
        const to = await resolveInside(this.root, m.to)
        await this.#makeParents(m.to)
        // link + unlink, not rename: rename would replace a file made at `to` meanwhile.
        await link(from, to)
        await unlink(from)
        dirs.add(dirname(from)).add(dirname(to))
        const entry = this.files.get(m.from)
        this.files.delete(m.from)
        if (entry !== undefined) this.files.set({ ...entry, path: m.to })
        this.#mine.delete(m.from)
        this.#mine.set(m.to, v)
        this.event({ path: m.to, action: 'moved', seed: m.from, ...(m.conflict && { message: 'conflict copy' }) })
      } catch (err) {
        this.#unsure.add(m.from).add(m.to)
        this.event({ path: m.from, action: 'error', ...describe(asFileError(err, m.from, `move it to ${m.to}`)) })
      }
    }
    for (const d of dirs) await syncDirectory(d)
  }

  /** Makes the directories above `path` that this side lacks (a rename into a new directory),
   *  and knows them from then on: the receiver then only sets their mode. */
  async #makeParents(path: string): Promise<void> {
    const missing: string[] = []
    for (let dir = posix.dirname(path); dir !== '.' && this.files.get(dir) === undefined; dir = posix.dirname(dir)) missing.unshift(dir)
    for (const dir of missing) {
      const abs = await resolveInside(this.root, dir) // every directory above is a real one
      await mkdir(abs).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err
      })
      const st = await lstat(abs)
      if (!st.isDirectory()) throw new DsyncError('NOT_A_FILE', `${dir}: is not a directory; cannot move a file into it`, { path: dir })
      this.files.set({ path: dir, kind: 'dir', size: 0, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 })
    }
  }

  /** Deletions, after the transfers (a file deleted here may have been a seed), deepest first. */
  async delete(paths: readonly string[]): Promise<void> {
    for (const path of paths) {
      try {
        const abs = await resolveInside(this.root, path, { allowFinalSymlink: true })
        const v = this.#mine.get(path)
        if (v === undefined || !(await this.#isListed(abs, v))) {
          this.#unsure.add(path)
          this.event({ path, action: 'kept', code: 'CHANGED_ON_RECEIVER', message: `${path}: changed during the sync; not deleted (sync again)` })
          continue
        }
        if (v.kind === 'dir') {
          try {
            await rmdir(abs)
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code
            if (code === 'ENOTEMPTY' || code === 'EEXIST') continue // holds files one side still has
            throw err
          }
        } else await rm(abs, { force: true })
        this.files.delete(path)
        this.#mine.delete(path)
        this.#deleted.add(path)
        this.event({ path, action: 'deleted' })
      } catch (err) {
        this.#unsure.add(path)
        this.event({ path, action: 'error', ...describe(asFileError(err, path, 'delete it')) })
      }
    }
  }

  /** True when the file at `abs` is still the version this side listed. */
  async #isListed(abs: string, v: Version): Promise<boolean> {
    let st
    try {
      st = await lstat(abs)
    } catch {
      return false
    }
    const kind = st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : st.isFile() ? 'file' : undefined
    if (kind !== v.kind) return false
    if (kind === 'symlink') return (await readlink(abs)) === v.target
    if (kind === 'dir') return true
    return st.size === v.size && sameMtime(st.mtimeMs, v.mtimeMs)
  }

  /**
   * The pair bases after the sync, as changes to `old`: each path both sides now agree on gets
   * the version agreed (the one received, else this side's as listed — never a new stat, so an
   * edit made during the sync is still a change next time); a path gone from both loses its
   * base; a path whose outcome failed keeps its old base, so the next sync looks at it again.
   */
  bases(old: ReadonlyMap<string, PairBase>): Map<string, PairBase | null> {
    const out = new Map<string, PairBase | null>()
    const paths = new Set([...old.keys(), ...this.#mine.keys(), ...this.#received.keys()])
    for (const path of paths) {
      if (this.#unsure.has(path)) continue
      const got = this.#received.get(path)
      const v: Version | undefined = got ?? (this.#deleted.has(path) ? undefined : this.#mine.get(path))
      const was = old.get(path)
      if (v === undefined) {
        if (was !== undefined) out.set(path, null)
        continue
      }
      const digest = v.digest ?? (v.kind === 'file' ? this.files.known(path)?.digest : undefined)
      const base = baseOf(digest === undefined ? v : { ...v, digest })
      if (was === undefined || !sameVersion(was, base) || was.mtimeMs !== base.mtimeMs || (base.digest !== undefined && was.digest !== base.digest)) out.set(path, base)
    }
    return out
  }
}

/** A per-file failure as an event's fields; anything but a file error ends the session. */
function describe(err: unknown): { code: string; message: string } {
  if (!isDsyncError(err) || err.code === 'ABORTED' || err.code === 'NETWORK') throw err
  return { code: err.code, message: err.message }
}
