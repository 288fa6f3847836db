/**
 * dsync wire protocol: the message shapes exactly as they travel, one msgpack map per binary
 * WebSocket frame, plus the protocol version and size limits. Shared by client and server;
 * imports nothing from src/. The spec is PROTOCOL.md next to this file; `src/net/codec.ts`
 * converts these to the domain messages of `src/net/messages.ts` and validates every field.
 */

/** The protocol version this build speaks best. A version changes when a message's meaning changes. */
export const PROTOCOL_VERSION = 1

/** Every version this build can speak, highest first. `hello` lists them; `auth` picks one. */
export const SUPPORTED_VERSIONS: readonly number[] = Object.freeze([1])

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
  maxExcludes: 256,
  maxFileListBytes: 4 * MiB,
  maxPatternBytes: 1024,
  /** Entries in one `files` message. */
  maxFilesPerMessage: 1000,
  /** Chunks in one `chunks` message (20 bytes each on the wire: 2.5 MiB). Longer lists are split. */
  maxChunksPerMessage: 131072,
  /** Largest chunk length in a `chunks` message (the chunkers cap chunks at 16 MiB). */
  maxChunkBytes: 16 * MiB,
  /** `plan.signature` length. */
  maxSignatureBytes: 3 * MiB,
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
}

/** Every wire message. Unknown keys are ignored (a newer peer may add optional ones). */
export type WireMessage =
  | { t: 'hello'; versions: number[]; server: string; challenge: Uint8Array }
  | {
      t: 'auth'
      version: number
      mac: Uint8Array
      challenge: Uint8Array
      role: 'push' | 'pull'
      subdir: string
      options: WireSessionOptions
    }
  | { t: 'welcome'; version: number; mac: Uint8Array }
  /** `z` is the msgpack array of WireFileEntry, compressed as one frame of codec `codec`
   *  (1 zstd, 2 deflate, 0 none: the literal-frame codecs of DELTA.md); `raw` is its unpacked
   *  length, at most `LIMITS.maxFileListBytes`. Sorted paths and like mtimes compress 3–5×. */
  | { t: 'files'; codec: number; raw: number; z: Uint8Array }
  | { t: 'filesEnd' }
  | { t: 'want'; id: number; path: string }
  /** Chunk list as columns: `lengths` is u32 little-endian per chunk, `fps` 16 bytes per chunk;
   *  the first chunk starts at `base`, each next one where the previous ended. `more` is true
   *  when another `chunks` message for the same id follows. */
  /** With `offsets` (f64 little-endian per chunk) the list is a SAMPLE of the file's chunks, at
   *  those offsets (increasing, non-overlapping), and `base` is 0; without, it is contiguous. */
  /** `size`, on every piece: the size of the file the list describes; chunks never reach past
   *  it, and a list holds at most size ÷ the minimum chunk size + 1 chunks. `digest`, on the
   *  last piece: the file's SHA-256. The rebuilt file must have exactly this size and digest. */
  | { t: 'chunks'; id: number; size: number; base: number; lengths: Uint8Array; fps: Uint8Array; offsets?: Uint8Array; more?: boolean; digest?: Uint8Array }
  | {
      t: 'plan'
      id: number
      method: 'delta' | 'whole'
      seed: string | null
      similarity: number
      signature: Uint8Array | null
    }
  | { t: 'data'; id: number; bytes: Uint8Array }
  | { t: 'dataEnd'; id: number }
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
    }
  | { t: 'done'; summary: Record<string, number> }
  /** Informational, either way, never ends the session: the server waits for another session
   *  on the tree; the sender could not read a file (`path`, `code`: it is not sent). */
  | { t: 'notice'; message: string; path?: string; code?: string }
  | { t: 'error'; code: string; message: string }

/** The message type tags. */
export type WireTag = WireMessage['t']
