import { type ChunkParams, cutterFor } from '../chunk/index.js'
import type { DsyncError } from '../errors.js'
import { type TreeEntry, walkTree } from '../fs/index.js'
import { readRecord, type ReadResult } from './read-record.js'
import type { FileRecord } from './record-codec.js'
import type { Store } from './state-store.js'

/** A walked entry; a file also carries its (now current) record. */
export type ScannedEntry = TreeEntry & { readonly record?: FileRecord }

/** What scanTree found and what it cost. */
export interface ScanResult {
  readonly entries: ScannedEntry[]
  /** Files whose content was read (new, changed, racy, or all with `checksum`). */
  readonly filesRead: number
  readonly bytesRead: number
}

/**
 * Files read at once. Reads of small files are mostly waits on libuv's thread pool; a few in
 * flight overlap them. On this 2-core machine (shared, load ~8), 2,000 files of 200 B:
 * 1 in flight 1.58 s, 4 in flight 1.34 s (median of 2 runs each). Memory: at most this many files' buffers.
 */
const READS_IN_FLIGHT = 4

/** Puts issued before their transactions are awaited: lmdb-js commits all pending ones at once
 *  (one fsync), so awaiting each put alone would cost one commit per file. */
const PUT_BATCH = 512

/**
 * Marks a promise's rejection as handled now: it is awaited later, in order, and rethrows then.
 * Without this, a read that fails while an older one is still awaited would be an unhandled
 * rejection, which ends the process.
 */
function awaitedLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined)
  return p
}

/**
 * Walks root and brings the store up to date: files whose size+mtime match their record are NOT
 * read (the no-op fast path), unless `checksum`; changed/new files are chunked (chunkPath with
 * params) and recorded; records of vanished (or now excluded) files deleted. Returns the
 * entries, each file with its record, and stats. Per-file failures go to `onError` when given
 * (the file is left out of the entries), else they are thrown.
 */
export async function scanTree(
  root: string,
  store: Store,
  opts: {
    params: ChunkParams
    exclude?: readonly string[]
    checksum?: boolean
    signal?: AbortSignal
    onFile?: (path: string, bytes: number) => void
    onError?: (err: DsyncError) => void
    /** called with each dsync temp file found (see walkTree) */
    onTemp?: (path: string) => void
  },
): Promise<ScanResult> {
  const cutter = cutterFor(opts.params)
  const entries: ScannedEntry[] = []
  const seen = new Set<string>()
  let filesRead = 0
  let bytesRead = 0
  let puts: Promise<void>[] = []
  // Reads in flight, oldest first; each resolves to its entry's slot in `entries`.
  const reads: { slot: number; entry: TreeEntry; read: Promise<ReadResult | undefined> }[] = []
  const finishOldestRead = async () => {
    const { slot, entry, read } = reads.shift()!
    const got = await read
    if (got === undefined) {
      seen.delete(entry.path)
      return
    }
    filesRead++
    bytesRead += got.record.size
    opts.onFile?.(entry.path, got.record.size)
    puts.push(awaitedLater(store.put(got.record, { racy: got.racy })))
    entries[slot] = { ...entry, size: got.record.size, record: got.record }
  }
  const flushPuts = async () => {
    const batch = puts
    puts = []
    await Promise.all(batch)
  }
  const walkOpts = {
    exclude: opts.exclude ?? [],
    ...(opts.signal && { signal: opts.signal }),
    ...(opts.onError && { onError: opts.onError }),
    ...(opts.onTemp && { onTemp: opts.onTemp }),
  }

  try {
    for await (const entry of walkTree(root, walkOpts)) {
      if (entry.kind !== 'file') {
        entries.push(entry)
        continue
      }
      seen.add(entry.path)
      const known = store.lookup(entry.path)
      const unchanged =
        known !== undefined && !known.racy && known.record.size === entry.size && known.record.mtimeMs === entry.mtimeMs
      if (unchanged && !opts.checksum) {
        let record = known.record
        if (record.mode !== entry.mode) {
          record = { ...record, mode: entry.mode }
          puts.push(awaitedLater(store.put(record)))
        }
        entries.push({ ...entry, record })
      } else {
        reads.push({ slot: entries.length, entry, read: awaitedLater(readRecord(root, entry, { ...opts, cutter })) })
        entries.push(entry) // replaced by the entry with its record when the read finishes
        if (reads.length >= READS_IN_FLIGHT) await finishOldestRead()
      }
      if (puts.length >= PUT_BATCH) await flushPuts()
    }
    while (reads.length > 0) await finishOldestRead()
  } finally {
    // On a throw, let the reads still running settle before the caller goes on (no stray
    // rejections, no file handles left open); their results are dropped.
    await Promise.allSettled(reads.map((r) => r.read))
    await Promise.allSettled(puts)
  }
  for (const path of store.recordPaths()) if (!seen.has(path)) puts.push(awaitedLater(store.delete(path)))
  await flushPuts()
  return { entries: entries.filter((e) => e.kind !== 'file' || ('record' in e && e.record !== undefined)), filesRead, bytesRead }
}

