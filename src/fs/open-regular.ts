import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { DsyncError } from '../errors.js'
import { fsError } from './fs-error.js'
import { stableUtime } from './file-time.js'

/** How to open a path dsync reads or changes. */
export interface OpenRegularOptions {
  /**
   * Refuse a symlink in the LAST component (O_NOFOLLOW: ELOOP) instead of following it. Every
   * open inside a synced tree sets it: a peer can make a symlink at a path (that is data, and
   * synced), and a later step at that path must act on the link's own inode, never on what it
   * points to outside the root. The parents are checked by `resolveInside`, and only the
   * session holding the tree changes its structure.
   */
  readonly noFollow?: boolean
  /** Expect a directory instead of a regular file. */
  readonly directory?: boolean
}

/**
 * Opens `path` read-only and checks, on the open descriptor, that it is a regular file (or a
 * directory with `directory`): the check and the use are on the same inode, so a swap between
 * them cannot redirect the use. O_NONBLOCK keeps a FIFO at that path from blocking the open
 * forever (it is then refused as not a regular file); it changes nothing for regular files.
 * Throws DsyncError NOT_FOUND, NOT_A_FILE, UNSAFE_PATH (a symlink, with noFollow) or IO.
 */
export async function openRegular(path: string, opts: OpenRegularOptions = {}): Promise<FileHandle> {
  let fh: FileHandle
  try {
    fh = await open(path, openFlags(opts))
  } catch (err) {
    throw openError(err, path, opts)
  }
  try {
    checkKind(await fh.stat(), path, opts)
    return fh
  } catch (err) {
    await fh.close()
    throw err instanceof DsyncError ? err : fsError(err, path, 'read its metadata')
  }
}

/**
 * Reads the regular file at `path` whole, expecting `size` bytes, with the checks of
 * openRegular; undefined when it holds more (it grew: the caller streams it instead).
 * Synchronous, for small files: an open, an fstat, a read or two and a close through libuv's
 * thread pool cost more than the system calls themselves. Sending 5,000 files of 0.1–4 KiB,
 * the sender's CPU was ~2.4 ms per file with async opens and reads, each file read twice.
 * Blocks the event loop for a few microseconds per KiB from the page cache; the callers keep
 * it to small files.
 */
export function readSmallRegularSync(path: string, size: number, opts: OpenRegularOptions = {}): Uint8Array | undefined {
  let fd: number
  try {
    fd = openSync(path, openFlags(opts))
  } catch (err) {
    throw openError(err, path, opts)
  }
  try {
    checkKind(fstatSync(fd), path, opts)
    // Not zeroed first: the read writes it, and only what it wrote is returned. 200 files of
    // 64 KiB in a fresh process (by hand, 3 runs): 92–110 ms zeroed, 65–79 ms not; most of the
    // rest is first-touch page faults, ~12.7 µs each on this VM (bench/README.md).
    const buf = new Uint8Array(Buffer.allocUnsafeSlow(size + 1).buffer, 0, size + 1)
    let n = 0
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null)
      if (got === 0) return buf.subarray(0, n)
      n += got
      if (n > size) return undefined
    }
  } catch (err) {
    throw err instanceof DsyncError ? err : fsError(err, path, 'read it')
  } finally {
    closeSync(fd)
  }
}

/** Files up to this size are read with synchronous calls (readSmallRegularSync says why): a
 *  quarter of a millisecond of blocking at most, from the page cache. */
const SYNC_READ_BYTES = 256 * 1024

/**
 * Reads the regular file at `path` whole, as readSmallRegularSync does (undefined when it holds
 * more than `size` bytes): with synchronous calls up to SYNC_READ_BYTES, above in the thread pool
 * while the event loop goes on (a record of a file up to 1 MiB, a bundle's file).
 */
export async function readRegular(path: string, size: number, opts: OpenRegularOptions = {}): Promise<Uint8Array | undefined> {
  if (size <= SYNC_READ_BYTES) return readSmallRegularSync(path, size, opts)
  const fh = await openRegular(path, opts)
  try {
    const buf = new Uint8Array(size + 1)
    let n = 0
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, null)
      if (bytesRead === 0) return buf.subarray(0, n)
      n += bytesRead
      if (n > size) return undefined
    }
  } catch (err) {
    throw err instanceof DsyncError ? err : fsError(err, path, 'read it')
  } finally {
    await fh.close()
  }
}

function openFlags(opts: OpenRegularOptions): number {
  return fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | (opts.noFollow ? fsConstants.O_NOFOLLOW : 0) | (opts.directory ? fsConstants.O_DIRECTORY : 0)
}

function checkKind(st: Stats, path: string, opts: OpenRegularOptions): void {
  const ok = opts.directory ? st.isDirectory() : st.isFile()
  if (!ok) {
    const what = st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : st.isSocket() ? 'a socket' : 'a device or special file'
    throw new DsyncError('NOT_A_FILE', `${path}: is ${what}, expected ${opts.directory ? 'a directory' : 'a regular file'}`, { path })
  }
}

function openError(err: unknown, path: string, opts: OpenRegularOptions): DsyncError {
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ELOOP' && opts.noFollow) {
    return new DsyncError('UNSAFE_PATH', `${path}: is a symlink; dsync does not follow it here`, { path, cause: err })
  }
  if (code === 'ENOTDIR' && opts.directory) {
    return new DsyncError('NOT_A_FILE', `${path}: is not a directory`, { path, cause: err })
  }
  return fsError(err, path, 'open it')
}

/**
 * Sets the permission bits and/or the modification time of the regular file (or directory)
 * at `path`, through a descriptor opened with `noFollow` (fchmod, futimes): never the target
 * of a symlink. `mtimeMs` in ms since the epoch.
 */
export async function setMetadata(
  path: string,
  meta: { readonly mode?: number; readonly mtimeMs?: number },
  opts: { readonly directory?: boolean } = {},
): Promise<void> {
  const fh = await openRegular(path, { noFollow: true, ...opts })
  try {
    if (meta.mode !== undefined) await fh.chmod(meta.mode)
    // Seconds as a double keep sub-millisecond precision; a Date would round to the millisecond.
    if (meta.mtimeMs !== undefined) await fh.utimes(Date.now() / 1000, stableUtime(meta.mtimeMs))
  } catch (err) {
    throw fsError(err, path, 'set its mode or time')
  } finally {
    await fh.close()
  }
}
