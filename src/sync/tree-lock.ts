import { link, mkdir, open, readFile, realpath, rename, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { DsyncError } from '../errors.js'
import { fsError, processAlive } from '../fs/index.js'
import { digestBytes, randomHex } from '../hash/index.js'

/** Sessions of one process that may queue for a tree behind the running one: each waits
 *  cheaply, but a queue without end holds connections and session slots as long as it lasts. */
export const DEFAULT_MAX_WAITING_PER_TREE = 8

/** How often a session waiting for another process's lock looks again. */
const POLL_MS = 200

/**
 * One writing session at a time on a tree, whichever process runs it: `dsync serve` (many
 * sessions, queued here in arrival order), `dsync serve --stdio` (one session per process,
 * behind ssh) and a `dsync pull` into the same directory. Two writers interleaving in one tree
 * could each pass the changed-on-receiver check against the other, and a session removes the
 * temp files of writers that are gone, which must not be another live session's.
 *
 * Across processes the lock is a file made with O_EXCL holding the owner's pid, outside the
 * tree (a private folder of the user's in the OS temp dir, named by a hash of the tree's real
 * path): nothing to sync, nothing left in the tree by a dry run. A lock whose owner died
 * (kill -9) is taken over. Sessions of different users on one tree do not exclude each other.
 */
export class TreeLock {
  #tail: Promise<void> = Promise.resolve()
  /** sessions of this process holding the tree or queued for it */
  #sessions = 0

  constructor(
    private readonly root: string,
    private readonly maxWaiting: number = DEFAULT_MAX_WAITING_PER_TREE,
  ) {}

  /**
   * Runs `fn` holding the tree. If it must wait (for a session of this process or another),
   * `onWait` is called once and the function it returns when the wait is over. `signal` ends
   * the wait. The tree is released however `fn` ends.
   */
  async hold<T>(onWait: () => () => void, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    // Thrown from the server's onSession: the client gets `error` BUSY (exit 11), the server
    // closes the connection and frees the session slot.
    if (this.#sessions > this.maxWaiting) {
      throw new DsyncError('BUSY', `${this.#sessions - 1} sessions are already waiting for this tree; try again later`)
    }
    const before = this.#tail
    let release!: () => void
    this.#tail = new Promise<void>((r) => (release = r))
    let stopWaiting = this.#sessions++ > 0 ? onWait() : undefined
    try {
      await before
      const file = await lockFileFor(this.root)
      for (;;) {
        if (await tryLock(file)) break
        stopWaiting ??= onWait()
        await sleep(POLL_MS, undefined, { signal })
      }
      stopWaiting?.()
      stopWaiting = undefined
      try {
        return await fn()
      } finally {
        await unlink(file).catch((err: NodeJS.ErrnoException) => {
          // Policy: gone already is released already (a tmp cleaner); anything else is logged
          // by the next session's take-over of a dead owner's lock.
          if (err.code !== 'ENOENT') throw fsError(err, file, 'release the tree lock')
        })
      }
    } finally {
      stopWaiting?.()
      this.#sessions--
      release()
    }
  }
}

async function lockFileFor(root: string): Promise<string> {
  const real = await realpath(root).catch(() => root)
  // One folder per user, private: in a shared one (/tmp is every user's) another user could
  // hold any tree's lock, or the first user's umask would lock the others out.
  const dir = join(tmpdir(), `dsync-locks-${process.getuid?.() ?? 'user'}`)
  await mkdir(dir, { recursive: true, mode: 0o700 })
  return join(dir, `${digestBytes(Buffer.from(real)).slice(0, 32)}.lock`)
}

/**
 * Takes the lock file if free or left by a dead process; false when a live one holds it. A dead
 * owner's lock (a server stopped by kill -9, or a crash) is removed (removeIfDead) and the create
 * tried again at once, through O_EXCL like everyone else: the next session neither waits POLL_MS
 * nor tells its client it is waiting for a session that is gone. Another waiter that took the
 * dead owner's place in between holds it: the create fails, and this side waits for it.
 */
async function tryLock(file: string): Promise<boolean> {
  if (await createLock(file)) return true
  return (await removeIfDead(file)) && (await createLock(file))
}

/** Creates the lock file holding this process's pid; false when it exists. */
async function createLock(file: string): Promise<boolean> {
  try {
    const fh = await open(file, 'wx', 0o644)
    await fh.writeFile(String(process.pid))
    await fh.close()
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError(err, file, 'take the tree lock')
    return false
  }
}

/** Removes the lock file if its owner is dead; false when it lives (or is being written). */
async function removeIfDead(file: string): Promise<boolean> {
  return deadOwner(await ownerOf(file)) && (await moveAsideIfDead(file))
}

/**
 * The second half of removeIfDead, apart for its test. Two waiters may both read a dead owner's
 * pid: a plain unlink by the slower one could remove the lock the faster one had just made in
 * its place, and both would hold the tree. So the lock is moved aside first (a rename: one
 * waiter gets it; another finds nothing and looks again at its next poll) and its owner read
 * again from the file moved: a live session's lock, moved by mistake, is put back with a link,
 * which makes it again unless a third waiter's create fell in that instant (then both hold the
 * tree: three waiters, a death and two polls within microseconds).
 */
export async function moveAsideIfDead(file: string): Promise<boolean> {
  const aside = `${file}.${process.pid}-${randomHex(4)}.stale`
  try {
    await rename(file, aside)
  } catch (err) {
    // Policy: another waiter moved it first, and holds the tree now or puts a live lock back:
    // look again at the next poll (a create now could slip in before that put-back).
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw fsError(err, file, 'take over a dead session\'s tree lock')
  }
  const dead = deadOwner(await ownerOf(aside))
  if (!dead) {
    await link(aside, file).catch((err: NodeJS.ErrnoException) => {
      // Policy: a third waiter made the lock in that instant; it holds the tree now.
      if (err.code !== 'EEXIST') throw fsError(err, file, 'put back a live session\'s tree lock')
    })
  }
  await unlink(aside).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw fsError(err, aside, 'remove a tree lock moved aside')
  })
  return dead
}

/** The pid a lock file holds; NaN when it holds none (gone, or being written). */
async function ownerOf(file: string): Promise<number> {
  return Number((await readFile(file, 'utf8').catch(() => '')) || NaN)
}

/** Whether `owner` is a process that has died (an empty file is a lock being written: alive). */
function deadOwner(owner: number): boolean {
  return Number.isSafeInteger(owner) && owner > 0 && owner !== process.pid && !processAlive(owner)
}
