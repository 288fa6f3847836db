/**
 * dsync wire protocol: the message shapes exactly as they travel, one msgpack map per binary
 * WebSocket frame, plus the protocol version and size limits. Shared by client and server;
 * imports nothing from src/. The spec is PROTOCOL.md next to this file; `src/net/codec.ts`
 * converts these to the domain messages of `src/net/messages.ts` and validates every field.
 */

/** The protocol version this build speaks best. A version changes when a message's meaning changes. */
export const PROTOCOL_VERSION = 11

/** Every version this build can speak, highest first. `hello` lists them; `auth` picks one.
 *  Version 2 adds the two-way `sync` role and its messages (PROTOCOL.md §4.2); version 3 lets a
 *  sender pack whole files together in a `bundle` (§4.7); version 4 lets a sender offer its list
 *  as directory summaries first (§4.9); version 5 adds the `query` role, a served tree's
 *  similarity index asked (§4.10); version 6 lets a sender check a large file sent whole with
 *  XXH3-128 (§4.11); version 7 lets a receiver plan a large changed file against its own old
 *  version without its chunk list (`want.direct`, §4.12); version 8 lets a sender end such a
 *  file's delta with its XXH3-128 (§4.12); version 9 lets a sender end a refined exchange itself
 *  (`plan.ends`, §4.1); version 10 bounds the file list a receiver holds (`listRoom`, §4.13);
 *  version 11 lets a receiver rename a file the sender moved (`result` action `moved`, §4.14).
 *  Otherwise push and pull are the same in all. */
export const SUPPORTED_VERSIONS: readonly number[] = Object.freeze([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1])

/** The first version that has the `sync` role. */
export const SYNC_PROTOCOL_VERSION = 2

/** The messages a `batch` may hold (§4.8): small ones, none that unpacks a compressed list. */
export const BATCHED_TYPES: readonly string[] = Object.freeze([
  'want', 'wholeWant', 'chunksWant', 'sketchWant', 'probe', 'dataEnd', 'result', 'notice', 'filesEnd', 'plan', 'refine', 'matches', 'chunks',
  'summaryWant', 'listRoom',
])

/** The first version whose receivers take a `bundle` (§4.7), and whose peers take a `batch` (§4.8). */
export const BUNDLE_PROTOCOL_VERSION = 3

/** The first version whose peers take a `summary` and answer it with a `summaryWant` (§4.9). */
export const SUMMARY_PROTOCOL_VERSION = 4

/** The first version that has the `query` role (§4.10), and whose peers read a `sketch` of
 *  format 2 (with each anchor's exact windows: src/similarity/sketch-codec.ts). */
export const QUERY_PROTOCOL_VERSION = 5

/** The first version whose receivers take a delta of format version 2 (checked with XXH3-128,
 *  protocol/DELTA.md) for a file sent whole (§4.11). */
export const FAST_CHECK_PROTOCOL_VERSION = 6

/** The first version whose senders take `want.direct` (§4.12): no chunk list, a plan follows. */
export const DIRECT_PROTOCOL_VERSION = 7

/** The first version whose receivers check a `want.direct` file whose delta ends with its
 *  XXH3-128 in place when only its time changed (§4.12): an older one rewrites it. */
export const DIRECT_CHECK_PROTOCOL_VERSION = 8

/** The first version whose senders take `plan.ends` (§4.1): they end a refined exchange by the
 *  receiver's rule, with no `refine` nil to wait for. */
export const ENDS_PROTOCOL_VERSION = 9

/** The first version whose senders list at most `LIMITS.listWindow` entries ahead of what the
 *  receiver has taken in, and more as its `listRoom` allows (§4.13). */
export const LIST_ROOM_PROTOCOL_VERSION = 10

/** The first version whose senders take a `result` of action `moved` (§4.14): with --delete, a
 *  file at a new path whose content is a file here the sender no longer has is renamed. */
export const MOVE_PROTOCOL_VERSION = 11

const KiB = 1024
const MiB = 1024 * KiB

/** Size limits. A frame or field over its limit is a BAD_MESSAGE and ends the session. */
export const LIMITS = Object.freeze({
  /** Largest binary frame either side accepts after the handshake (WebSocket `maxPayload`). */
  maxFrameBytes: 4 * MiB,
  /** Largest frame before the handshake completes: an unauthenticated peer gets little to parse. */
  maxHandshakeFrameBytes: 16 * KiB,
  /** `data.bytes` length. */
  maxDataBytes: 1 * MiB,
  /** Files in one `bundle`, and their bytes (`bundle.raw`): with the compressed bytes (never
   *  more than `raw`) and 1024 × 10 bytes of ids and sizes, it fits in a frame. */
  maxBundleFiles: 1024,
  maxBundleBytes: 3 * MiB + 768 * KiB,
  /** `bundle.dict`: the bytes of the bundles before it a bundle's frame may use as dictionary. */
  maxBundleHistoryBytes: 64 * KiB,
  /** Messages in one `batch`, and the bytes of their frames packed together (`batch.raw`). */
  maxBatchMessages: 4096,
  maxBatchBytes: 1 * MiB,
  maxExcludes: 256,
  maxFileListBytes: 4 * MiB,
  maxPatternBytes: 1024,
  /** Entries in one `files` or `state` message, paths in one `digests`, operations in one `ops`. */
  maxFilesPerMessage: 1000,
  /** (version 10, §4.13) Entries of the file list a sender may send before its first
   *  `listRoom`, and ahead of the receiver's taking them in after it. */
  listWindow: 8192,
  /** Bytes of one directory's summary in a `summary` (the first 16 of a SHA-256, §4.9). */
  summaryHashBytes: 16,
  /** Chunks in one `chunks` message (20 bytes each on the wire: 2.5 MiB). Longer lists are split. */
  maxChunksPerMessage: 131072,
  /** Largest chunk length in a `chunks` message (the chunkers cap chunks at 16 MiB). */
  maxChunkBytes: 16 * MiB,
  /** `plan.signature` length. */
  maxSignatureBytes: 3 * MiB,
  /** `query.top`: files in a `similarFound` (a query estimates at most this many candidates). */
  maxQueryTop: 256,
  /** Files and pairs of one group of a `groupsFound` answer (its pieces together), and the
   *  bytes of its files' paths: what a client holds while it puts a group together. */
  maxGroupRows: 1_000_000,
  maxGroupPathBytes: 64 * MiB,
  /** Keys in a `probe` (4 bytes each). */
  maxProbeKeys: 64,
  /** `sketch.sketch` length (a sketch is asked only for files up to 64 MiB: ~1 MiB of sketch). */
  maxSketchBytes: 3 * MiB,
  /** A relative path, in UTF-8 bytes, and one segment of it. */
  maxPathBytes: 4096,
  maxSegmentBytes: 255,
  /** A symlink target, in UTF-8 bytes. */
  maxLinkTargetBytes: 4096,
  /** Free-text strings (server name, error messages, metric names, actions, codes). */
  maxTextBytes: 4096,
  /** Keys in a `done.summary`. */
  maxSummaryKeys: 256,
  /** Versions listed in `hello`. */
  maxVersions: 64,
  /** `hello.challenge`, `auth.challenge`: random bytes. */
  challengeBytes: 32,
  /** `auth.mac`, `welcome.mac`: HMAC-SHA256 (empty when the server has no token). */
  macBytes: 32,
  /** The whole handshake (connect to `welcome`) must finish within this time. */
  handshakeTimeoutMs: 10_000,
})

/** File kinds on the wire, as small integers in a `files` entry tuple. */
/** Bytes of one `probe` key: a chunk fingerprint's first 4 bytes (§4.6). */
export const PROBE_KEY_BYTES = 4

export const WIRE_KIND = Object.freeze({ file: 0, dir: 1, symlink: 2 } as const)

/** `files` entry: [path, kind, size, mtimeMs, mode, extra]. `extra` is the 32-byte SHA-256
 *  digest for a file (or null when the sender did not compute it), the link target for a
 *  symlink, null for a directory. */
export type WireFileEntry = [path: string, kind: number, size: number, mtimeMs: number, mode: number, extra: Uint8Array | string | null]

/** Session options chosen by the client, carried in `auth`. */
export interface WireSessionOptions {
  dryRun: boolean
  delete: boolean
  checksum: boolean
  threshold: number
  metric: string
  force: boolean
  /** gitignore-style patterns the sender skips; the receiver protects them from --delete.
   *  At most `LIMITS.maxExcludes`, each at most `LIMITS.maxPatternBytes`. Absent = []. */
  exclude?: string[]
  /** (sync) the client tree's replica id: 32 hex digits, made once per tree */
  replica?: string
  /** (sync) the client machine's name, for conflict copies: `[A-Za-z0-9_.-]{1,64}` */
  machine?: string
  /** zstd level of the file data the session's sender compresses, 1–19; absent = 3 */
  compressLevel?: number
}

/** `state` entry: a `files` entry and how the path changed on the server since its last sync
 *  with the client's replica (STATE_STATUS). A deleted path carries its last-synced version. */
export type WireStateEntry = [path: string, kind: number, size: number, mtimeMs: number, mode: number, extra: Uint8Array | string | null, status: number]

/** `state` entry statuses. */
export const STATE_STATUS = Object.freeze({ same: 0, changed: 1, new: 2, deleted: 3 } as const)

/** `ops` entry: [op, path, to]: 0 send (listed in the pull phase), 1 move to `to` (before the
 *  transfers), 2 delete (after them), 3 keep as the conflict copy `to` (a move), 4 clear
 *  (delete before the transfers: an entry a path of another kind replaces). */
export type WireOpEntry = [op: number, path: string, to: string | null]
export const OP_CODE = Object.freeze({ send: 0, move: 1, delete: 2, conflictCopy: 3, clear: 4 } as const)

/** `step` names, in the order a sync session passes them (PROTOCOL.md §4.2). */
export const SYNC_STEPS = ['opsEnd', 'opsApplied', 'phaseEnd', 'syncEnd', 'syncDone'] as const

/** Every wire message. Unknown keys are ignored (a newer peer may add optional ones). */
export type WireMessage =
  | { t: 'hello'; versions: number[]; server: string; challenge: Uint8Array }
  | {
      t: 'auth'
      version: number
      mac: Uint8Array
      challenge: Uint8Array
      role: 'push' | 'pull' | 'sync' | 'query'
      subdir: string
      options: WireSessionOptions
    }
  | { t: 'welcome'; version: number; mac: Uint8Array }
  /** `z` is the msgpack array of WireFileEntry, compressed as one frame of codec `codec`
   *  (1 zstd, 2 deflate, 0 none: the literal-frame codecs of DELTA.md); `raw` is its unpacked
   *  length, at most `LIMITS.maxFileListBytes`. Sorted paths and like mtimes compress 3–5×. */
  | { t: 'files'; codec: number; raw: number; z: Uint8Array }
  | { t: 'filesEnd' }
  /** (version 4, sender→receiver, §4.9) directories offered by summary instead of listed:
   *  `dirs` (≤ `LIMITS.maxFilesPerMessage` paths, '' the root) and `hashes`, 16 bytes each, in
   *  order: each summarizes everything under its directory. */
  | { t: 'summary'; dirs: string[]; hashes: Uint8Array }
  /** (version 4, receiver→sender, §4.9) the answer to one `summary`: the directories of it
   *  whose summary differs here, to be listed (none: all of them match). */
  | { t: 'summaryWant'; paths: string[] }
  /** (version 10, receiver→sender, §4.13) the sender may have sent `upTo` entries of the file
   *  list in all (`files` entries, counted from the session's start) */
  | { t: 'listRoom'; upTo: number }
  /** `probe` (§4.6): answer with a `probe` instead of the chunk list (a sender may still send
   *  the list, when it is short); `digest`: put the file's SHA-256 in it. `direct` (version 7,
   *  §4.12): send nothing yet, a `plan` for it follows. */
  | { t: 'want'; id: number; path: string; whole?: boolean; probe?: boolean; digest?: boolean; direct?: boolean }
  /** (sender→receiver, §4.6) a few content keys of a file at a new path: `keys` holds 4 bytes
   *  (a fingerprint's first 4) per key, at most `LIMITS.maxProbeKeys`; `size` as in `chunks`;
   *  `anchors` (version 3): 4 bytes (u32 little-endian) per similarity-sketch posting key, as many */
  | { t: 'probe'; id: number; size: number; keys: Uint8Array; digest?: Uint8Array; anchors?: Uint8Array }
  /** (receiver→sender, §4.6) after a `probe`: send the file's chunk list after all */
  | { t: 'chunksWant'; id: number }
  /** (receiver→sender, §4.6) after a `probe`: nothing here can seed it; send it whole now, as
   *  for a `plan` of method `whole` */
  | { t: 'wholeWant'; id: number }
  /** Chunk list as columns: `lengths` is u32 little-endian per chunk, `fps` 16 bytes per chunk;
   *  the first chunk starts at `base`, each next one where the previous ended. `more` is true
   *  when another `chunks` message for the same id follows. */
  /** With `offsets` (f64 little-endian per chunk) the list is a SAMPLE of the file's chunks, at
   *  those offsets (increasing, non-overlapping), and `base` is 0; without, it is contiguous. */
  /** `size`, on every piece: the size of the file the list describes; chunks never reach past
   *  it, and a list holds at most size ÷ the minimum chunk size + 1 chunks. `digest`, on the
   *  last piece: the file's SHA-256. The rebuilt file must have exactly this size and digest. */
  | { t: 'chunks'; id: number; size: number; base: number; lengths: Uint8Array; fps: Uint8Array; offsets?: Uint8Array; more?: boolean; digest?: Uint8Array; sketchable?: boolean; refinable?: boolean }
  | {
      t: 'plan'
      id: number
      method: 'delta' | 'whole'
      seed: string | null
      similarity: number
      signature: Uint8Array | null
      /** (version 2) a refined exchange: `matches` / `refine` rounds before the data (§4.1) */
      refine?: boolean
      /** (version 9, with `refine`) the sender ends the rounds itself by the receiver's rule,
       *  and sends its delta right after its last `matches` (§4.1) */
      ends?: boolean
    }
  /** (version 2, sender→receiver) a match list (protocol/DELTA.md "Refinement") */
  | { t: 'matches'; id: number; list: Uint8Array }
  /** (version 2, receiver→sender) a refinement signature, or nil: no more rounds, send the delta;
   *  `cancel` (version 7) with nil: the receiver gave the file up, send nothing but `dataEnd` */
  | { t: 'refine'; id: number; signature: Uint8Array | null; whole?: boolean; cancel?: boolean }
  | { t: 'data'; id: number; bytes: Uint8Array }
  | { t: 'dataEnd'; id: number }
  /** (version 3, sender→receiver, §4.7) the whole `data` streams of n files, packed together:
   *  `ids` and `sizes` (each stream's length) in order, the streams one after another, `raw`
   *  bytes in all (the sum of `sizes`), compressed as one frame of codec `codec` (as in
   *  `files`). Each file is then done, as after its `dataEnd`. `dict` (absent = 0): the frame
   *  was compressed with the last `dict` bytes of the session's earlier bundles, unpacked, one
   *  after another, as its dictionary. */
  | { t: 'bundle'; ids: number[]; sizes: number[]; codec: number; raw: number; z: Uint8Array; dict?: number }
  /** (version 3, either way, §4.8) several messages in one frame: `z` unpacks (codec as in
   *  `files`) to `raw` bytes, a msgpack array of 2–4096 bins, each one message's frame as it
   *  would travel alone (never a `batch`), taken in order. */
  | { t: 'batch'; codec: number; raw: number; z: Uint8Array }
  /** `seed` and `similarity` (0..1) say why a file was sent as it was; `conflictCopy` names
   *  where the receiver kept its own version of a file changed on both sides. */
  | {
      t: 'result'
      id: number
      path: string
      action: string
      ok: boolean
      code?: string
      message?: string
      seed?: string
      similarity?: number
      conflictCopy?: string
      /** ≤ 3 [path, similarity 0..1] pairs: the seeds weighed, best first (§4.5) */
      candidates?: [string, number][]
    }
  | { t: 'done'; summary: Record<string, number> }
  /** Informational, either way, never ends the session: the server waits for another session
   *  on the tree; the sender could not read a file (`path`, `code`: it is not sent); a file
   *  whose data is coming changed as it was read (`code` SOURCE_CHANGED: its data ends short,
   *  and the receiver asks again, §4.6 "Windows"). */
  | { t: 'notice'; message: string; path?: string; code?: string }
  | { t: 'error'; code: string; message: string }
  /** (sync, S→C) the server's tree and how each path changed since the last sync with the
   *  client's replica: `z` as in `files`, of WireStateEntry. */
  | { t: 'state'; codec: number; raw: number; z: Uint8Array }
  /** (sync, S→C) the state is complete; the server tree's replica id and machine name */
  | { t: 'stateEnd'; replica: string; machine: string }
  /** (sync) C→S: `paths` whose SHA-256 the client needs; S→C: the same paths and, for each,
   *  its digest (bin 32) or nil (not a readable file) */
  | { t: 'digests'; paths: string[]; digests?: (Uint8Array | null)[] }
  /** (sync, C→S) what the server must do: `z` as in `files`, of WireOpEntry */
  | { t: 'ops'; codec: number; raw: number; z: Uint8Array }
  /** (sync) a step of the session is over (see SYNC_STEPS) */
  | { t: 'step'; name: string }
  /** (version 2, receiver→sender) send the similarity sketch of file `id` (asked when the chunk
   *  lists put its best seed below the threshold: they cannot see edits smaller than a chunk) */
  | { t: 'sketchWant'; id: number }
  /** (version 2, sender→receiver) the sketch (src/similarity/sketch-codec.ts), or nil when the
   *  file is too large for one or cannot be read */
  | { t: 'sketch'; id: number; sketch: Uint8Array | null }
  /** (version 5, client→server, §4.10) the one request of a `query` session: the files most
   *  similar to a file, given by its `sketch` (`similar`, at most `top`), or every group of
   *  similar files (`groups`), by `metric` at or above `threshold` (0..1); `scan`: bring the
   *  index up to date first */
  | { t: 'query'; kind: 'similar' | 'groups'; metric: string; threshold: number; scan: boolean; top?: number; sketch?: Uint8Array }
  /** (version 5, server→client) the answer to a `similar` query, best first */
  | { t: 'similarFound'; files: WireSimilarFile[]; scan?: WireScan }
  /** (version 5, server→client) the answer to a `groups` query, in pieces: `z` as in `files`, of
   *  WireGroupPiece; `more` while another `groupsFound` follows; `scan` on the first */
  | { t: 'groupsFound'; codec: number; raw: number; z: Uint8Array; more?: boolean; scan?: WireScan }

/** `similarFound` entry: a file and its similarity to the query, every metric 0..1 (§4.10). */
export type WireSimilarFile = [path: string, size: number, jaccard: number, dice: number, lcs: number, containment: number, containedIn: number, errorBound: number]

/** What the server's index update did before it answered (§4.10). */
export type WireScan = [files: number, filesRead: number, bytesRead: number, removed: number]

/** `groupsFound` piece of a group: `cont` when it goes on with the previous piece's group; its
 *  files [path, size, similarity to the group's reference (its first file)], and its pairs,
 *  [a, b, similarity] with a and b the indexes of files in the group (all its pieces so far). */
export type WireGroupPiece = [cont: boolean, files: [path: string, size: number, similarity: number][], pairs: [a: number, b: number, similarity: number][]]

/** The message type tags. */
export type WireTag = WireMessage['t']
