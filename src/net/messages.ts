import type { Chunk, FileDigest } from '../types.js'

/**
 * Domain messages: what `src/sync/` sends and receives through a `Channel`. The codec
 * (`codec.ts`) maps them to the wire shapes of `protocol/messages.ts` and back; every inbound
 * message has been validated (types, sizes, safe relative paths) before anyone sees it.
 * Binary fields are `Uint8Array`; a decoded one may be a view into the received frame.
 */
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
      role: 'push' | 'pull'
      subdir: string
      options: SessionOptions
    }
  /** S→C: the server's MAC over the client's challenge (empty when it has no token). */
  | { t: 'welcome'; version: number; mac: Uint8Array }
  /** sender→receiver: part of the file list, at most `LIMITS.maxFilesPerMessage` entries. */
  | { t: 'files'; entries: FileEntry[] }
  /** sender→receiver: the file list is complete. */
  | { t: 'filesEnd' }
  /** receiver→sender: send me the chunk list of this file; `id` names the file from now on. */
  | { t: 'want'; id: number; path: string }
  /** sender→receiver: the file's chunks, contiguous and in order. A list longer than
   *  `LIMITS.maxChunksPerMessage` is split over several messages, all but the last with `more`.
   *  `size` (every piece) is the size of the file the list describes, `digest` (the last
   *  piece) its SHA-256: what the rebuilt file must be. */
  | { t: 'chunks'; id: number; size: number; chunks: Chunk[]; more?: boolean; digest?: FileDigest; sampled?: boolean }
  /** receiver→sender: how to send file `id`. `similarity` in 0..1. */
  | {
      t: 'plan'
      id: number
      method: 'delta' | 'whole'
      seed: string | null
      similarity: number
      signature: Uint8Array | null
    }
  /** sender→receiver: delta stream bytes, at most `LIMITS.maxDataBytes` each. */
  | { t: 'data'; id: number; bytes: Uint8Array }
  | { t: 'dataEnd'; id: number }
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
    }
  /** receiver→sender: end of the session, with counters. */
  | { t: 'done'; summary: Record<string, number> }
  /** either way, informational: a server telling a client it waits for the tree, or a sender
   *  reporting a file it could not send (`path`, `code`). Never ends the session. */
  | { t: 'notice'; message: string; path?: string; code?: string }
  /** either way: fatal for the session. Surfaces from `Channel.messages()` as a thrown DsyncError. */
  | { t: 'error'; code: string; message: string }

/** The message type tags. */
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
}

/** Session roles, named for what the client does. */
export type Role = 'push' | 'pull'
