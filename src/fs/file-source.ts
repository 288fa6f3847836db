import { lstatSync, type Stats } from 'node:fs'
import { stat } from 'node:fs/promises'
import { DsyncError } from '../errors.js'
import { allocWithHeadroom } from '../headroom.js'
import { fsError } from './fs-error.js'
import { openRegular, readRegular } from './open-regular.js'

/**
 * Read size for file sources. fs.createReadStream's default 64 KiB buffer caps reading at
 * ~1.6 GB/s here; 1–4 MiB reads into one reused buffer ran at 10+ GB/s from the page cache.
 */
export const READ_BUFFER_BYTES = 1024 * 1024

/** Checks that `path` is a regular file and returns its size; NOT_FOUND / NOT_A_FILE otherwise. */
export async function regularFileSize(path: string): Promise<number> {
  let st
  try {
    st = await stat(path)
  } catch (err) {
    throw fsError(err, path, 'read it')
  }
  if (!st.isFile()) {
    const what = st.isDirectory() ? 'is a directory' : 'is not a regular file'
    throw new DsyncError('NOT_A_FILE', `${path}: ${what}, expected a regular file`, { path })
  }
  return st.size
}

/** How a file is streamed (openFileSource, openFilesSource). */
export interface FileSourceOptions {
  readonly bufferBytes?: number
  readonly signal?: AbortSignal
  readonly noFollow?: boolean
  /** a new buffer for each read, never written again once yielded (the caller may keep them),
   *  with room before it for a message header (headroom.ts): else two buffers take turns */
  readonly fresh?: boolean
}

/**
 * Streams a file's bytes in order. Yields views of reused buffers (unless `fresh`): each is
 * valid only until the next iteration (chunkStream copies what it keeps). A file larger than one buffer is read
 * one buffer ahead: the next read runs in the thread pool while the caller works on the last
 * one (chunking and fingerprinting 256 MiB from tmpfs: 387 → 318 ms, the process idle on its
 * reads 25% → 1% of the time). Memory: two buffers, whatever the size.
 * `noFollow`: refuse a symlink at `path` (see openRegular); a FIFO or device is always refused.
 */
export async function* openFileSource(
  path: string,
  opts: FileSourceOptions = {},
): AsyncGenerator<Uint8Array> {
  const fh = await openRegular(path, { noFollow: opts.noFollow === true })
  let pending: Promise<number> | undefined
  try {
    // A small file gets a small buffer: allocating (and zeroing) 1 MiB per file dominated the
    // time of syncing trees of many small files. +1 so a file read whole ends on the next read.
    let size = Infinity
    try {
      size = (await fh.stat()).size
    } catch (err) {
      throw fsError(err, path, 'read it')
    }
    const bytes = Math.max(1, Math.min(opts.bufferBytes ?? READ_BUFFER_BYTES, size + 1))
    // Fresh buffers are never read into again once yielded: no need to zero them; they have
    // room for a message header before them, so a `data` message can carry one without a copy,
    // and full ones come from the pool of those already sent (headroom.ts).
    const alloc = (): Uint8Array => (opts.fresh === true ? allocWithHeadroom(bytes) : new Uint8Array(bytes))
    const bufs = [alloc()]
    // (Fresh: the second is made when first read into.)
    if (size >= bytes) bufs.push(opts.fresh === true ? new Uint8Array(0) : alloc())
    // Reads go in file order (position null): each starts once the one before has ended.
    // Marked handled at once: a read ahead that fails while the caller is busy with the last
    // buffer (awaiting a write) is an error of the next `await pending`, not an unhandled
    // rejection, which ends the process.
    const readInto = (buf: Uint8Array): Promise<number> => {
      const p = fh.read(buf, 0, buf.length, null).then(
        (r) => r.bytesRead,
        (err: unknown) => Promise.reject(fsError(err, path, 'read it')),
      )
      p.catch(() => undefined)
      return p
    }
    let next = 0
    pending = readInto(bufs[0]!)
    for (;;) {
      if (opts.signal?.aborted) throw new DsyncError('ABORTED', `${path}: reading cancelled`, { path })
      const n = await pending
      pending = undefined
      if (n === 0) return
      const buf = bufs[next]!
      next = (next + 1) % bufs.length
      if (opts.fresh === true) bufs[next] = alloc()
      // The buffer just yielded is not read into until the caller asks for the one after.
      if (bufs.length > 1) pending = readInto(bufs[next]!)
      yield buf.subarray(0, n)
      if (bufs.length === 1) pending = readInto(opts.fresh === true ? (bufs[0] = alloc()) : buf)
    }
  } finally {
    // A read still running (the caller stopped early) must end before its descriptor closes.
    await pending?.catch(() => undefined)
    await fh.close()
  }
}

/** The bytes of several files one after another (the seeds of a delta from several: see
 *  openSeedsReader), as openFileSource streams one. */
export async function* openFilesSource(
  paths: readonly string[],
  opts: FileSourceOptions = {},
): AsyncGenerator<Uint8Array> {
  for (const p of paths) yield* openFileSource(p, opts)
}

/**
 * Yields what `source` yields (the bytes of the file at `path`, opened on the first read), and
 * checks that the file has the same inode, size, mtime and ctime after the read as just before it: bytes of
 * a file written while being read are a mix of two versions, which no digest computed along
 * the way can tell. Throws SOURCE_CHANGED, naming the file `name`, when it changed (or went).
 */
export async function* unchangedWhileRead(source: AsyncIterable<Uint8Array>, path: string, name: string): AsyncGenerator<Uint8Array> {
  const before = stamp(path)
  yield* source
  if (stamp(path) !== before) throw changedWhileRead(name)
}

/**
 * A small file read whole (readRegular: synchronous calls up to 256 KiB) and checked as
 * unchangedWhileRead checks a stream; undefined when it holds more than `size` bytes (it grew:
 * the caller streams it).
 */
export async function readWholeUnchanged(path: string, size: number, name: string): Promise<Uint8Array | undefined> {
  const before = stamp(path)
  const bytes = await readRegular(path, size, { noFollow: true })
  if (stamp(path) !== before) throw changedWhileRead(name)
  return bytes
}

/** What must stay the same while a file is read: its inode, size, mtime and ctime ('gone' when
 *  it cannot be looked at). Synchronous: an lstat through the thread pool cost the sender ~0.2 ms
 *  of its main thread here, a small file's whole read ~20 µs. */
function stamp(path: string): string {
  try {
    return statStamp(lstatSync(path))
  } catch {
    return 'gone'
  }
}

/** A file's stamp from its stats: equal stamps, the same file unchanged (inode, size, mtime,
 *  ctime). */
export function statStamp(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`
}

function changedWhileRead(name: string): DsyncError {
  return new DsyncError('SOURCE_CHANGED', `${name}: changed while it was being sent; not written (run again once it is stable)`, { path: name })
}
