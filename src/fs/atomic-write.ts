import { closeSync, fchmodSync, fsync, futimesSync, openSync, renameSync, writeSync } from 'node:fs'
import { open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { promisify } from 'node:util'
import { dirname, sep } from 'node:path'
import type { ByteSink } from '../delta/index.js'
import { DsyncError } from '../errors.js'
import { fsError } from './fs-error.js'
import { TEMP_PREFIX } from './tree-entry.js'
import { stableUtime } from './file-time.js'

/** Options of writeAtomically. */
export interface AtomicWriteOptions {
  /** Permission bits to give the file (else the default, 0o666 less the umask). */
  readonly mode?: number
  /** Modification time to give the file, in ms since the epoch. */
  readonly mtimeMs?: number
  readonly signal?: AbortSignal
  /**
   * fsync the directory after the rename (default true), so the rename survives a crash. A
   * caller writing many files may pass false and call `syncDirectory` once per directory at the
   * end: the file's data is fsynced before the rename either way, so a crash can only lose the
   * rename (leaving the old file), never expose a half-written one. Measured here: 2.6 ms per
   * small file with the directory fsync, 1.0 ms without.
   */
  readonly syncDir?: boolean
  /** Bytes the file is expected to hold, when known: a small file is written with synchronous
   *  calls (SYNC_WRITE_BYTES). A wrong guess costs speed, never correctness. */
  readonly sizeHint?: number
  /**
   * A file is at `outPath` now, which the rename replaces: the rename then runs in the thread
   * pool, even for a small file. Replacing a file frees its blocks in the rename itself, and on
   * a filesystem mounted with `discard` (this VM's ext4) that waits for the device: renameSync
   * held the receiver's main thread ~0.5 ms a file of 500 edited ones (`blkdev_issue_discard`
   * under `ext4_evict_inode` in `perf`), where a new name took ~40 µs. A wrong guess costs
   * speed, never correctness.
   */
  readonly replaces?: boolean
  /** Given every piece written, in order, after it is written (it may be reused after the
   *  returned promise settles: copy it to keep it). Awaited: a slow consumer slows the writer. */
  readonly onWrite?: (bytes: Uint8Array) => Promise<void> | void
}

function aborted(outPath: string, signal: AbortSignal): DsyncError {
  return new DsyncError('ABORTED', `${outPath}: writing cancelled; the file was left as it was`, { path: outPath, cause: signal.reason })
}

/** This process's part of its temp files' names: its pid first (stale-temps.ts reads it there
 *  to tell a live writer's file), then a random tag, so that another process that once had the
 *  same pid, or one on another machine writing the same folder, names its files otherwise. */
const TEMP_TAG = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`
let tempCount = 0

/**
 * A temp file name next to `outPath`, unique with the exclusive create below: this process's
 * tag and a count. Cut at the last separator rather than through dirname, basename and join:
 * their normalizing was ~7 µs a file, 0.15 of a receiver's CPU s on 20,000 small files.
 */
function tempPathFor(outPath: string, attempt: number): string {
  const cut = Math.max(outPath.lastIndexOf('/'), sep === '\\' ? outPath.lastIndexOf('\\') : -1) + 1
  return outPath.slice(0, cut) + `${TEMP_PREFIX}${TEMP_TAG}-${(tempCount++).toString(36)}-${attempt}-${outPath.slice(cut)}`.slice(0, 255)
}

/**
 * Files expected to be at most this big are written with synchronous calls (open, write,
 * fchmod, futimes, close, rename; the fsync stays asynchronous): each asynchronous call is a
 * round trip through libuv's thread pool, which costs more than the system call on a small
 * file, and a first push of 5,000 small files spent most of the receiver's CPU on them.
 */
const SYNC_WRITE_BYTES = 256 * 1024

const fsyncFd = promisify(fsync)

/** A temp file being written: through a FileHandle, or a plain descriptor and sync calls. */
interface TempFile {
  readonly path: string
  write(bytes: Uint8Array, at: number, length: number): Promise<number> | number
  /** mode, mtime, fsync, close */
  finish(mode: number | undefined, mtimeMs: number | undefined): Promise<void>
  /** close, on failure (never throws) */
  abandon(): Promise<void>
  /** `replaces`: a file is at `to` (AtomicWriteOptions.replaces) */
  rename(to: string, replaces: boolean): Promise<void> | void
}

/**
 * A large file's data is flushed to disk as it is written: an fdatasync is started (not waited
 * for) each time this many more bytes have been written, one at a time, so the fsync before the
 * rename has only the tail left. Writing 1 GiB in 1 MiB writes then fsyncing, by hand on this
 * 2-vCPU VM (4 runs each, in turns): 0.51–2.53 s (the writes alone took 0.24–2.2 s when 1 GiB
 * of dirty pages built up, the fsync 0.26–0.35 s); flushed every 64 MiB: 0.35–0.43 s (fsync
 * 19–43 ms). rsync does not fsync at all.
 *
 * Every 8 MiB rather than 64 (2026-11-27, an AMD EPYC VM): a 50 MiB file with 100 overwrites
 * was rebuilt without one flush, and the receiver's fsync of it took 72 ms while the sender
 * waited (strace); the push 644 → 598 ms, median of 8 pairs in turns. A new 1 GiB file: 3.4 –
 * 4.3 s → 2.8–3.4 s wall, the server's CPU 3.3–4.5 s → 2.8–3.4 s (3 pairs: fewer dirty pages
 * built up behind the writes).
 */
export const FLUSH_EVERY_BYTES = 8 * 1024 * 1024

function asyncTemp(path: string, fh: FileHandle): TempFile {
  let open = true
  let unflushed = 0
  let flushing: Promise<void> | undefined
  let flushError: unknown
  return {
    path,
    write: async (bytes, at, length) => {
      if (flushError !== undefined) throw flushError
      const n = (await fh.write(bytes, at, length)).bytesWritten
      unflushed += n
      if (unflushed >= FLUSH_EVERY_BYTES && flushing === undefined) {
        unflushed = 0
        flushing = fh.datasync().then(
          () => (flushing = undefined),
          (err: unknown) => {
            flushError = err
            flushing = undefined
          },
        )
      }
      return n
    },
    async finish(mode, mtimeMs) {
      await flushing
      if (flushError !== undefined) throw flushError
      if (mode !== undefined) await fh.chmod(mode)
      // Seconds as a double keep sub-millisecond precision; a Date would round to the millisecond.
      if (mtimeMs !== undefined) await fh.utimes(Date.now() / 1000, stableUtime(mtimeMs))
      await fh.sync()
      open = false
      await fh.close()
    },
    abandon: async () => {
      await flushing
      if (open) await fh.close().catch(() => undefined)
    },
    rename: (to) => rename(path, to),
  }
}

function syncTemp(path: string, fd: number): TempFile {
  let open = true
  return {
    path,
    write: (bytes, at, length) => writeSync(fd, bytes, at, length),
    async finish(mode, mtimeMs) {
      if (mode !== undefined) fchmodSync(fd, mode)
      if (mtimeMs !== undefined) futimesSync(fd, Date.now() / 1000, stableUtime(mtimeMs))
      await fsyncFd(fd)
      open = false
      closeSync(fd)
    },
    abandon: async () => {
      if (!open) return
      open = false
      try {
        closeSync(fd)
      } catch {
        // Policy: the write already failed; that error is the one to report.
      }
    },
    rename: (to, replaces) => (replaces ? rename(path, to) : renameSync(path, to)),
  }
}

async function createTemp(outPath: string, small: boolean): Promise<TempFile> {
  for (let attempt = 0; ; attempt++) {
    const path = tempPathFor(outPath, attempt)
    try {
      return small ? syncTemp(path, openSync(path, 'wx')) : asyncTemp(path, await open(path, 'wx'))
    } catch (err) {
      // Policy: a name clash (another writer's temp file) just means try another name.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 8) {
        throw fsError(err, outPath, 'create a temp file in its directory')
      }
    }
  }
}

/**
 * Writes `outPath` all at once or not at all: `produce` writes into a temp file in the same
 * directory (a `TEMP_PREFIX` name the tree walk ignores), which is then fsynced, given `mode`
 * and `mtimeMs`, and renamed over `outPath`; the directory is fsynced so the rename survives a
 * crash. On any error or abort the temp file is removed and `outPath` is untouched. Returns what
 * `produce` returned.
 */
export async function writeAtomically<T>(
  outPath: string,
  produce: (sink: ByteSink) => Promise<T>,
  opts: AtomicWriteOptions = {},
): Promise<T> {
  const { signal } = opts
  if (signal?.aborted) throw aborted(outPath, signal)
  const tmp = await createTemp(outPath, opts.sizeHint !== undefined && opts.sizeHint <= SYNC_WRITE_BYTES)
  try {
    const sink: ByteSink = {
      async write(bytes: Uint8Array): Promise<void> {
        if (signal?.aborted) throw aborted(outPath, signal)
        for (let done = 0; done < bytes.length; ) {
          try {
            done += await tmp.write(bytes, done, bytes.length - done)
          } catch (err) {
            throw fsError(err, outPath, 'write it')
          }
        }
        await opts.onWrite?.(bytes)
      },
    }
    const result = await produce(sink)
    if (signal?.aborted) throw aborted(outPath, signal)
    try {
      await tmp.finish(opts.mode, opts.mtimeMs)
      await tmp.rename(outPath, opts.replaces === true)
    } catch (err) {
      throw fsError(err, outPath, 'finish writing it')
    }
    if (opts.syncDir !== false) await syncDirectory(dirname(outPath))
    return result
  } catch (err) {
    await tmp.abandon()
    await unlink(tmp.path).catch((e: NodeJS.ErrnoException) => {
      // Policy: the temp file may be gone already (renamed, or never fully created).
      if (e.code !== 'ENOENT') throw fsError(e, tmp.path, 'remove this temp file')
    })
    throw err
  }
}

export async function syncDirectory(dir: string): Promise<void> {
  let dh: FileHandle
  try {
    dh = await open(dir, 'r')
  } catch (err) {
    throw fsError(err, dir, 'open the directory to sync it')
  }
  try {
    await dh.sync()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'ENOTSUP' && code !== 'EPERM') throw fsError(err, dir, 'sync the directory')
  } finally {
    await dh.close()
  }
}
