import { readSync } from 'node:fs'
import type { SeedReader } from '../delta/index.js'
import { DsyncError } from '../errors.js'
import { fsError } from './fs-error.js'
import { openRegular, readRegular } from './open-regular.js'

/** Reads of at most this size go into one of two buffers the reader keeps (`reuse`). */
const REUSED_READ_BYTES = 1024 * 1024

/**
 * With `syncSmall`, reads of at most this size are made with a synchronous call: an asynchronous
 * one is a trip through libuv's thread pool, ~0.1–0.2 ms each here from the page cache, against
 * a few µs for the system call. A refinement round reads each small hole of a file (50 MiB with
 * 100 × 64 B overwrites: 100 holes of ~1.5 KiB, four rounds and the delta): those trips were
 * most of the sender's time in the rounds (by hand, waits of ~10 ms in a 25 ms round even with
 * 32 reads in flight; ~2 ms with this). Larger reads stay asynchronous, and so do all of a
 * reader without it (a rebuild's): a synchronous read holds the event loop, and every session
 * of a server with it, as long as the disk takes.
 */
const SYNC_READ_BYTES = 64 * 1024

/** Options of openSeedReader and openSeedsReader. */
export interface SeedReaderOptions {
  /** refuse a symlink at the path (see openRegular) */
  readonly noFollow?: boolean
  /** reads of up to 1 MiB go into two buffers in turn (see openSeedReader) */
  readonly reuse?: boolean
  /** reads of up to SYNC_READ_BYTES are synchronous calls: for many small reads from the page
   *  cache (refinement's holes) */
  readonly syncSmall?: boolean
}

/** Where each read goes: a new buffer, or (`reuse`) one of two in turn, up to REUSED_READ_BYTES. */
function readBuffers(reuse: boolean): (length: number) => Uint8Array {
  if (!reuse) return (length) => new Uint8Array(length)
  const two = [new Uint8Array(0), new Uint8Array(0)]
  let turn = 0
  return (length) => {
    if (length > REUSED_READ_BYTES) return new Uint8Array(length)
    turn ^= 1
    if (two[turn]!.length < length) two[turn] = new Uint8Array(Math.min(REUSED_READ_BYTES, Math.max(length, 2 * two[turn]!.length)))
    return two[turn]!.subarray(0, length)
  }
}

/**
 * Opens a regular file for random reads by applyDelta. The file stays open (and readable even
 * if renamed over, as patching in place does) until `close()`. A read that finds the file
 * shorter than when it was opened throws IO: the seed changed under us. `noFollow`: refuse a
 * symlink at `path` (see openRegular). `reuse`: reads of up to 1 MiB go into two buffers in
 * turn, so a result is valid until the call after next (SeedReader's contract, which applyDelta
 * keeps): rebuilding 1 GiB allocated 1 GiB of buffers otherwise, ~0.15–0.2 s of its garbage
 * collection here. Without it, each read gets a new buffer, which the caller may keep.
 */
export async function openSeedReader(path: string, opts: SeedReaderOptions = {}): Promise<SeedReader & { close(): Promise<void> }> {
  const handle = await openRegular(path, { noFollow: opts.noFollow === true })
  let size: number
  try {
    size = (await handle.stat()).size
  } catch (err) {
    await handle.close()
    throw fsError(err, path, 'read it')
  }
  const bufferFor = readBuffers(opts.reuse === true)
  return {
    size,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const out = bufferFor(length)
      // (A closed handle's fd is -1: the asynchronous read then says it is closed.)
      const small = opts.syncSmall === true && length <= SYNC_READ_BYTES && handle.fd >= 0
      for (let got = 0; got < length; ) {
        let n: number
        try {
          n = small ? readSync(handle.fd, out, got, length - got, offset + got) : (await handle.read(out, got, length - got, offset + got)).bytesRead
        } catch (err) {
          throw fsError(err, path, 'read it')
        }
        if (n === 0) throw new DsyncError('IO', `${path}: the seed file shrank while it was being read; run the command again`, { path })
        got += n
      }
      return out
    },
    close: () => handle.close(),
  }
}

/**
 * Several seed files read as one: their bytes one after another, as a delta from several seeds
 * addresses them (a file made of pieces of two files copies from both: DESIGN.md "Decision").
 * One path is openSeedReader's own reader. `reuse` as openSeedReader's.
 */
export async function openSeedsReader(paths: readonly string[], opts: SeedReaderOptions = {}): Promise<SeedReader & { close(): Promise<void> }> {
  if (paths.length === 1) return openSeedReader(paths[0]!, opts)
  const parts: (SeedReader & { close(): Promise<void> })[] = []
  try {
    // A part's read is copied out at once, so its buffers may be reused, but only when reads
    // come one at a time (`reuse`): two in flight on one part would fill the same buffer.
    for (const p of paths) parts.push(await openSeedReader(p, opts))
  } catch (err) {
    await Promise.all(parts.map((r) => r.close()))
    throw err
  }
  const bufferFor = readBuffers(opts.reuse === true)
  const starts: number[] = []
  let size = 0
  for (const r of parts) {
    starts.push(size)
    size += r.size
  }
  return {
    size,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const out = bufferFor(length)
      for (let got = 0; got < length; ) {
        const at = offset + got
        let i = parts.length - 1
        while (i > 0 && starts[i]! > at) i--
        const part = parts[i]!
        const n = Math.min(length - got, part.size - (at - starts[i]!))
        if (n <= 0) throw new DsyncError('IO', `a read past the end of the seeds (${at} of ${size} bytes); run the command again`)
        out.set(await part.read(at - starts[i]!, n), got)
        got += n
      }
      return out
    },
    close: async () => {
      await Promise.all(parts.map((r) => r.close()))
    },
  }
}

/**
 * Seeds of at most this many bytes in all are read once, whole, into memory (readSeedsWhole),
 * and their signature, the refinement rounds and the rebuild all read that copy. Read from the
 * files, a small seed was opened, stat'ed, read and closed three times through libuv's thread
 * pool: ~85 µs of the receiver's main thread each time on this 2-vCPU VM (a thread pool trip
 * switches threads), against ~10 µs for one synchronous open, fstat, read and close. The same
 * bound as the synchronous reads and writes of small files (readRegular, atomic-write.ts), and
 * at most this much is held per file the receiver fetches at once.
 */
export const HELD_SEED_BYTES = 256 * 1024

/**
 * The seed files at `paths` read whole, one after another (as openSeedsReader addresses them),
 * when each holds exactly the bytes listed for it (`sizes`); undefined when one does not (it
 * changed since it was listed: the caller reads the files as it would have, and finds that
 * out there). Refuses what openRegular refuses (`noFollow`: a symlink at a path).
 */
export async function readSeedsWhole(paths: readonly string[], sizes: readonly number[], opts: { noFollow?: boolean } = {}): Promise<Uint8Array | undefined> {
  const parts: Uint8Array[] = []
  for (const [i, path] of paths.entries()) {
    const bytes = await readRegular(path, sizes[i]!, { noFollow: opts.noFollow === true })
    if (bytes === undefined || bytes.length !== sizes[i]) return undefined
    parts.push(bytes)
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
}

/** Seed bytes held in memory as a SeedReader: reads are views of them (never written to). */
export function memorySeedReader(bytes: Uint8Array): SeedReader & { close(): Promise<void> } {
  return {
    size: bytes.length,
    read: async (offset, length) => bytes.subarray(offset, offset + length),
    close: async () => undefined,
  }
}

/** Seed bytes held in memory as a source (computeSignature's input). */
export async function* memorySeedSource(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes
}
