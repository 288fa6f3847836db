import type { MetricName } from '../choices.js'
import type { Chunk, FileDigest, SimilarFile, SketchScanResult } from '../types.js'

/**
 * Domain messages: what `src/sync/` sends and receives through a `Channel`. The codec
 * (`codec.ts`) maps them to the wire shapes of `protocol/messages.ts` and back; every inbound
 * message has been validated (types, sizes, safe relative paths) before anyone sees it.
 * Binary fields are `Uint8Array`; a decoded one may be a view into the received frame.
 */
/** A seed the receiver weighed for a file, as `-vv` shows it. */
export interface SeedShown {
  readonly path: string
  /** 0..1, by the session's metric */
  readonly similarity: number
}

/** At most this many weighed seeds go back with a file's result. */
export const MAX_SHOWN_CANDIDATES = 3

/** One file of a `bundle`: its id and the length of its data stream, which starts at the sum of
 *  the lengths before it. */
export interface BundleStream {
  readonly id: number
  readonly size: number
}

/** The request of a `query` session (§4.10): the files of the served tree most similar to a
 *  file given by its encoded sketch, or every group of similar files in it. */
export type IndexQuery =
  | { readonly kind: 'similar'; readonly sketch: Uint8Array; readonly metric: MetricName; readonly threshold: number; readonly top: number; readonly scan: boolean }
  | { readonly kind: 'groups'; readonly metric: MetricName; readonly threshold: number; readonly scan: boolean }

/** A piece of a group in a `groupsFound` answer: `cont` when it goes on with the group of the
 *  piece before; pairs name files by their index in the group (its pieces so far). */
export interface GroupPiece {
  readonly cont: boolean
  readonly files: readonly { readonly path: string; readonly size: number; readonly similarity: number }[]
  readonly pairs: readonly { readonly a: number; readonly b: number; readonly similarity: number }[]
}

/** One directory's summary in a `summary` message. */
export interface DirSummary {
  readonly path: string
  readonly hash: Uint8Array
}

export type Message =
  /** S→C, first message: versions the server speaks, its name, a fresh random challenge. */
  | { t: 'hello'; versions: number[]; server: string; challenge: Uint8Array }
  /** C→S: chosen version, the client's MAC over the server challenge, its own challenge,
   *  and what the session is for. `subdir` is '' for the served root. */
  | {
      t: 'auth'
      version: number
      mac: Uint8Array
      challenge: Uint8Array
      role: Role
      subdir: string
      options: SessionOptions
    }
  /** S→C: the server's MAC over the client's challenge (empty when it has no token). */
  | { t: 'welcome'; version: number; mac: Uint8Array }
  /** sender→receiver: part of the file list, at most `LIMITS.maxFilesPerMessage` entries. */
  | { t: 'files'; entries: FileEntry[] }
  /** sender→receiver: the file list is complete. */
  | { t: 'filesEnd' }
  /** sender→receiver (version 4): directories offered by summary (src/sync/tree-summary.ts)
   *  instead of listed, each `hash` 16 bytes; '' is the root (PROTOCOL.md §4.9). */
  | { t: 'summary'; dirs: readonly DirSummary[] }
  /** receiver→sender (version 4): the answer to one `summary`: its directories whose summary
   *  differs on the receiver, to be listed; empty when all match. */
  | { t: 'summaryWant'; paths: readonly string[] }
  /** receiver→sender (version 10): the sender may have listed `upTo` entries in all (§4.13). */
  | { t: 'listRoom'; upTo: number }
  /** receiver→sender: send me the chunk list of this file; `id` names the file from now on.
   *  `whole`: skip the list, send the file whole now, as if a `plan` of method `whole` had
   *  come back (a small new file no content here can help build; PROTOCOL.md §4). */
  /** `probe`: answer with a `probe` (a few content keys) instead of the chunk list, which
   *  is asked for only if a key is found here (a file at a new path: PROTOCOL.md §4.6);
   *  `digest`: with the file's SHA-256 (a file of its size exists here: it may be a copy).
   *  `direct` (version 7): no list; a refined `plan` against the receiver's own old version of
   *  the file follows (a large file changed in place: PROTOCOL.md §4.12). */
  | { t: 'want'; id: number; path: string; whole?: boolean; probe?: boolean; digest?: boolean; direct?: boolean }
  /** sender→receiver: the probe asked for: `keys` are 4-byte prefixes of chosen chunk
   *  fingerprints (probeKeys), `size` the file's size, `digest` when asked. */
  | { t: 'probe'; id: number; size: number; keys: Uint8Array; digest?: FileDigest; anchors?: readonly number[] }
  /** receiver→sender: a probe found something here; send the chunk list after all. */
  | { t: 'chunksWant'; id: number }
  /** receiver→sender: a probe found nothing here; send the file whole, as for a whole `plan`. */
  | { t: 'wholeWant'; id: number }
  /** sender→receiver: the file's chunks, contiguous and in order. A list longer than
   *  `LIMITS.maxChunksPerMessage` is split over several messages, all but the last with `more`.
   *  `size` (every piece) is the size of the file the list describes, `digest` (the last
   *  piece) its SHA-256: what the rebuilt file must be. `sketchable` (last piece, version 2):
   *  the sender answers a `sketchWant` for this file. */
  | { t: 'chunks'; id: number; size: number; chunks: Chunk[]; more?: boolean; digest?: FileDigest; sampled?: boolean; sketchable?: boolean; refinable?: boolean }
  /** receiver→sender: how to send file `id`. `similarity` in 0..1. */
  | {
      t: 'plan'
      id: number
      method: 'delta' | 'whole'
      seed: string | null
      similarity: number
      signature: Uint8Array | null
      /** (version 2) refinement rounds (`matches`, `refine`) come before the data */
      refine?: boolean
      /** (version 9, with `refine`) the sender ends the rounds by the receiver's rule (§4.1) */
      ends?: boolean
    }
  /** sender→receiver (version 2): the matches a round found, encoded (encodeMatches) */
  | { t: 'matches'; id: number; list: Uint8Array }
  /** receiver→sender (version 2): a refinement signature (encodeRefineSignature), or null: send the delta */
  /** `whole` with a null signature: the rounds measured the file below the threshold; send
   *  it as literals only (PROTOCOL.md §4.3). `cancel` (version 7) with a null signature: the
   *  receiver gave the file up (it changed on the sender, or cannot be written); send nothing
   *  for it but `dataEnd` (§4.12). */
  | { t: 'refine'; id: number; signature: Uint8Array | null; whole?: boolean; cancel?: boolean }
  /** sender→receiver: delta stream bytes, at most `LIMITS.maxDataBytes` each. */
  | { t: 'data'; id: number; bytes: Uint8Array }
  | { t: 'dataEnd'; id: number }
  /** sender→receiver (version 3): the whole data streams of several files, compressed together
   *  as one frame (`raw` bytes once unpacked: src/sync/bundle.ts); each file is then done, as
   *  after its `dataEnd` (PROTOCOL.md §4.7). */
  | { t: 'bundle'; streams: readonly BundleStream[]; codec: number; raw: number; z: Uint8Array; dict: number }
  /** either way (version 3): several small messages in one frame, compressed together
   *  (src/net/batching.ts); they are handled as if each had come alone, in order. */
  | { t: 'batch'; messages: readonly Message[] }
  /** receiver→sender: what happened to one file. */
  | {
      t: 'result'
      id: number
      path: string
      action: string
      ok: boolean
      code?: string
      message?: string
      /** the seed the file was built from (delta, copy) or measured against (whole) */
      seed?: string
      /** similarity to that seed, 0..1 */
      similarity?: number
      /** where the receiver kept its own version, for a file changed on both sides */
      conflictCopy?: string
      /** the best seeds it weighed, best first (≤ MAX_SHOWN_CANDIDATES), each with its
       *  similarity by the session's metric: what `-vv` shows */
      candidates?: SeedShown[]
    }
  /** receiver→sender: end of the session, with counters. */
  | { t: 'done'; summary: Record<string, number> }
  /** either way, informational: a server telling a client it waits for the tree, or a sender
   *  reporting a file it could not send (`path`, `code`). Never ends the session. */
  | { t: 'notice'; message: string; path?: string; code?: string }
  /** either way: fatal for the session. Surfaces from `Channel.messages()` as a thrown DsyncError. */
  | { t: 'error'; code: string; message: string }
  /** (sync, S→C) part of the server's tree, each path with how it changed since the last sync
   *  with the client's replica; at most `LIMITS.maxFilesPerMessage` entries. */
  | { t: 'state'; entries: StateEntry[] }
  /** (sync, S→C) the state is complete: the server tree's replica id and machine name. */
  | { t: 'stateEnd'; replica: string; machine: string }
  /** (sync) C→S: send me these files' SHA-256; S→C: here they are, one per path (undefined:
   *  not a readable regular file). */
  | { t: 'digests'; paths: string[]; digests?: (FileDigest | undefined)[] }
  /** (sync, C→S) part of what the server must do, at most `LIMITS.maxFilesPerMessage`. */
  | { t: 'ops'; ops: SyncOp[] }
  /** (sync) a step of the session is over: `opsEnd` (C→S, all ops sent), `opsApplied` (S→C, after the moves),
   *  `phaseEnd` (by the sender of a phase, after its receiver's `done`), `syncEnd` (C→S),
   *  `syncDone` (S→C: deletions done, state recorded). */
  | { t: 'step'; name: SyncStep }
  /** receiver→sender (version 2): send the similarity sketch of file `id`. */
  | { t: 'sketchWant'; id: number }
  /** sender→receiver (version 2): the sketch of file `id`, encoded (encodeSketch), or null. */
  | { t: 'sketch'; id: number; sketch: Uint8Array | null }
  /** client→server (version 5, the `query` role): the session's one request. */
  | { t: 'query'; query: IndexQuery }
  /** server→client (version 5): the files found similar, best first. */
  | { t: 'similarFound'; files: SimilarFile[]; scan?: SketchScanResult }
  /** server→client (version 5): groups in pieces, `more` while another message follows. */
  | { t: 'groupsFound'; pieces: GroupPiece[]; more: boolean; scan?: SketchScanResult }
export type MessageTag = Message['t']
/** The message with tag `T`. */
export type MessageOf<T extends MessageTag> = Extract<Message, { t: T }>

/** One entry of the sender's file list. `size` in bytes, `mtimeMs` in ms since the epoch,
 *  `mode` the permission bits. `digest` for files (when known), `target` for symlinks. */
export interface FileEntry {
  path: string
  kind: 'file' | 'dir' | 'symlink'
  size: number
  mtimeMs: number
  mode: number
  digest?: FileDigest
  target?: string
}

/** What the client asks of the session; the server applies them to its role. `threshold` in 0..1. */
export interface SessionOptions {
  dryRun: boolean
  delete: boolean
  checksum: boolean
  threshold: number
  metric: string
  force: boolean
  /** gitignore-style patterns the sender skips; the receiver protects them from --delete */
  exclude: string[]
  /** (sync) the client tree's replica id (32 hex digits) */
  replica?: string
  /** (sync) the client machine's name, for the conflict copies made of its versions */
  machine?: string
  /** zstd level (1–19) of the file data the sender of the session compresses; absent: 3 */
  compressLevel?: number
}

/** (sync) Since the last sync between two replicas, how a path changed on one side. */
export type ChangeStatus = 'same' | 'changed' | 'new' | 'deleted'

/** (sync) One path of a side's tree with its change since the last sync. `deleted`: the entry
 *  is what was last synced (the path is gone now). */
export interface StateEntry extends FileEntry {
  status: ChangeStatus
}

/** (sync) What the client asks the server to do with its tree. */
export type SyncOp =
  | { op: 'send'; path: string } // list it in the pull phase
  | { op: 'move'; path: string; to: string } // rename it before the transfers (a rename made on the client)
  | { op: 'conflictCopy'; path: string; to: string } // keep it as a conflict copy (a move) before the transfers
  | { op: 'delete'; path: string } // delete it after the transfers, if still as listed
  | { op: 'clear'; path: string } // delete it before the transfers: a path of another kind replaces it

export type SyncStep = 'opsEnd' | 'opsApplied' | 'phaseEnd' | 'syncEnd' | 'syncDone'

/** Session roles, named for what the client does; `sync` goes both ways (protocol 2); `query`
 *  asks the served tree's similarity index (protocol 5). */
export type Role = 'push' | 'pull' | 'sync' | 'query'

/** Bytes of file data a message carries (what --bwlimit meters): a `data` message's, a
 *  `bundle`'s as packed; 0 for any other. */
export function fileDataBytes(msg: Message): number {
  return msg.t === 'data' ? msg.bytes.length : msg.t === 'bundle' ? msg.z.length : 0
}
