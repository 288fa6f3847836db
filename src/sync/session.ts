import { mkdir, stat } from 'node:fs/promises'
import { chunkParams, type ChunkParams } from '../chunk/index.js'
import { DsyncError } from '../errors.js'
import { fsError } from '../fs/index.js'
import {
  DIRECT_CHECK_PROTOCOL_VERSION, DIRECT_PROTOCOL_VERSION, ENDS_PROTOCOL_VERSION, FAST_CHECK_PROTOCOL_VERSION, LIMITS, LIST_ROOM_PROTOCOL_VERSION, MOVE_PROTOCOL_VERSION, PROTOCOL_VERSION, QUERY_PROTOCOL_VERSION,
  type FileEntry, type SessionOptions,
} from '../net/index.js'
import { Store } from '../store/index.js'
import { DEFAULT_METRIC, DEFAULT_THRESHOLD } from '../similarity/index.js'
import type { FileEvent, SyncReport, SyncSummary } from './report.js'
import type { TreeSummary } from './tree-summary.js'
import type { SyncPlan } from './two-way/reconcile.js'

/** What every role of a session works with, on its side: the sender, the receiver, and both
 *  ends of a two-way sync. */
export interface RoleDeps {
  /** absolute path of this side's tree */
  readonly root: string
  readonly store: Store
  readonly params: ChunkParams
  readonly options: SessionOptions
  readonly report: SyncReport
  readonly signal: AbortSignal
  /** the protocol version agreed with the peer (what it understands); absent: this build's */
  readonly version?: number
  /** called with the entries of the file list sent (or received); the server keeps them as the
   *  client replica's bases (PeerBases) */
  readonly onListed?: (entries: readonly FileEntry[]) => void
  /** the same for a folder a directory summary stood for (§4.9): everything under `dir` in
   *  `summary`, walked when needed (a no-op of 1,000,000 files does not hold them all) */
  readonly onStoodFor?: (dir: string, summary: TreeSummary) => void
  /** each file's event as it comes: the receiver's own, `unchanged` ones too (but not those a
   *  directory summary counted); the sender's from the receiver's results (it hears nothing of
   *  unchanged files until the end). The server records the client replica's base of a file
   *  once it settled (PeerBases.settled). */
  readonly onSettled?: (e: FileEvent) => void
  /** entries of the file list the receiver takes in ahead of asking for them (§4.13); default
   *  `LIMITS.listWindow`. Both sides must agree: only tests set it. */
  readonly listWindow?: number
}

/** Whether the peer of a session reads sketches of format 2 (each anchor's exact windows):
 *  version 5 on (QUERY_PROTOCOL_VERSION), or this build's own when the version is not known. */
export function peerReadsWindows(d: Pick<RoleDeps, 'version'>): boolean {
  return (d.version ?? PROTOCOL_VERSION) >= QUERY_PROTOCOL_VERSION
}

/** Whether the peer of a session takes a file sent whole checked with XXH3-128 (§4.11, delta
 *  format version 2): version 6 on, or this build's own when the version is not known. */
export function peerTakesFastCheck(d: Pick<RoleDeps, 'version'>): boolean {
  return (d.version ?? PROTOCOL_VERSION) >= FAST_CHECK_PROTOCOL_VERSION
}

/** Whether the session speaks version 7 (§4.12): a sender takes `want.direct` and
 *  `refine.cancel`, and a receiver ends a refined exchange at a `dataEnd`. Version 7 on, or this
 *  build's own when the version is not known. */
export function speaksDirect(d: Pick<RoleDeps, 'version'>): boolean {
  return (d.version ?? PROTOCOL_VERSION) >= DIRECT_PROTOCOL_VERSION
}

/** Whether the peer of a session takes a `want.direct` file's delta ending with its XXH3-128
 *  (§4.12, version 8): one only touched is still checked in place, not rewritten. */
export function peerChecksDirectFast(d: Pick<RoleDeps, 'version'>): boolean {
  return (d.version ?? PROTOCOL_VERSION) >= DIRECT_CHECK_PROTOCOL_VERSION
}

/** Whether the peer of a session, as sender, ends a refined exchange itself (`plan.ends`, §4.1,
 *  version 9 on). */
export function senderEndsRounds(d: Pick<RoleDeps, 'version'>): boolean {
  return (d.version ?? PROTOCOL_VERSION) >= ENDS_PROTOCOL_VERSION
}

/** Whether the peer of a session, as sender, takes a `result` of action `moved` (§4.14,
 *  version 11 on): a moved file may then be renamed here rather than copied. */
export function senderTakesMoves(d: Pick<RoleDeps, 'version'>): boolean {
  return (d.version ?? PROTOCOL_VERSION) >= MOVE_PROTOCOL_VERSION
}

/** The list window of a session (§4.13): entries a sender may list ahead of the receiver's
 *  `listRoom`, or undefined when the peer predates it (version 10) and the list goes unpaced. */
export function listWindow(d: Pick<RoleDeps, 'version' | 'listWindow'>): number | undefined {
  return (d.version ?? PROTOCOL_VERSION) >= LIST_ROOM_PROTOCOL_VERSION ? (d.listWindow ?? LIMITS.listWindow) : undefined
}

/** Chunk params every dsync uses for sync: both sides must cut the same way. */
export const SYNC_CHUNK_PARAMS: ChunkParams = chunkParams()

/** The options of a session with their defaults filled in. */
export function sessionOptions(o: Partial<SessionOptions> = {}): SessionOptions {
  if (o.compressLevel !== undefined && !(Number.isInteger(o.compressLevel) && o.compressLevel >= 1 && o.compressLevel <= 19)) {
    throw new DsyncError('USAGE', `compressLevel ${o.compressLevel}: write a whole number from 1 (fastest) to 19 (smallest)`)
  }
  return {
    dryRun: o.dryRun ?? false,
    delete: o.delete ?? false,
    checksum: o.checksum ?? false,
    threshold: o.threshold ?? DEFAULT_THRESHOLD,
    metric: o.metric ?? DEFAULT_METRIC,
    force: o.force ?? false,
    exclude: o.exclude ?? [],
    ...(o.compressLevel !== undefined && { compressLevel: o.compressLevel }),
  }
}

/** What push and pull return: the file events kept (ClientOptions `keepEvents`, all by
 *  default) and the totals, which count every one. */
export interface SyncResult {
  readonly events: readonly FileEvent[]
  readonly summary: SyncSummary
  /** (two-way sync) what the plan was: with --dry-run, all there is */
  readonly plan?: SyncPlan
}

/** Checks that `dir` is a directory (creating it when `create`); NOT_FOUND / NOT_A_FILE otherwise. */
export async function ensureDirectory(dir: string, create: boolean): Promise<void> {
  if (create) {
    try {
      await mkdir(dir, { recursive: true })
    } catch (err) {
      throw fsError(err, dir, 'create it')
    }
  }
  let st
  try {
    st = await stat(dir)
  } catch (err) {
    throw fsError(err, dir, 'open it')
  }
  if (!st.isDirectory()) throw new DsyncError('NOT_A_FILE', `${dir}: is not a directory; give the directory to sync`, { path: dir })
}

/** Opens the root's store for the length of `fn`. */
export async function withStore<T>(root: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}
