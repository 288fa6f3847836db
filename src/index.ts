/**
 * dsync as a library: the commands as functions (paths and options in, results out), and the
 * pure core under them (chunkers, fingerprints, similarity). Each command function is a thin
 * wrapper over the module the CLI (`bin/dsync.js`) uses, with the CLI's defaults.
 *
 * ```ts
 * import { serve, push, pull, similarity, signature, delta, patch } from 'dsync-node'
 * ```
 */
import { readFile } from 'node:fs/promises'
import type { ChunkerKind } from './chunk/index.js'
import { loadCodecs } from './compress/index.js'
import { computeSignature, decodeSignature, encodeDelta, encodeSignature, MAX_SIGNATURE_BYTES, type DeltaStats } from './delta/index.js'
import { DsyncError } from './errors.js'
import { measureSimilarity, openFileSource, patchFile, regularFileSize, writeAtomically, type SimilarityResult } from './fs/index.js'
import { DEFAULT_PORT } from './net/index.js'
import { DEFAULT_METRIC, DEFAULT_THRESHOLD, type MetricName } from './similarity/index.js'
import * as sync from './sync/index.js'
import type { FileDigest } from './types.js'

// zstd loads once, here, before anything of the library can compress or decompress a frame.
await loadCodecs()

export * from './types.js'
export { DsyncError, isDsyncError, type ErrorCode } from './errors.js'
export * from './chunk/index.js'
export * from './hash/index.js'
export * from './similarity/index.js'
export { chunkPath, openFileSource } from './fs/index.js'
export type { SyncResult, SyncSummary, FileEvent, Action, KeptEvents, SyncServer } from './sync/index.js'
export type { DeltaStats } from './delta/index.js'
export type { SimilarityResult } from './fs/index.js'

/** A signal nothing aborts, for callers that pass none. */
const never = (): AbortSignal => new AbortController().signal

/** Options of `push` and `pull`: those of `dsync push` / `dsync pull`, same defaults. */
export interface SyncOptions {
  /** Shared token (`--token-file`); null or absent: none (the server must be loopback-only). */
  readonly token?: string | null
  /** PEM CA certificate to trust for `wss://` (`--ca`). */
  readonly ca?: Uint8Array
  /** Show what would be done; change nothing (`-n`). Default false. */
  readonly dryRun?: boolean
  /** Delete receiver files the sender does not have (`--delete`). Default false. */
  readonly delete?: boolean
  /** Compare contents, not size and mtime (`-c`). Default false. */
  readonly checksum?: boolean
  /** Overwrite files changed on the receiver since the last sync (`--force`). Default false. */
  readonly force?: boolean
  /** Delta-or-whole rule (`--metric`, `--threshold`): default dice ≥ 0.5. */
  readonly metric?: MetricName
  readonly threshold?: number
  /** gitignore-syntax patterns to skip (`--exclude`). */
  readonly exclude?: readonly string[]
  /** Each file's decision, as it is made (what `-v` prints). */
  readonly onEvent?: (e: sync.FileEvent) => void
  /** Bytes of files settled so far, bytes of all files listed so far. */
  readonly onProgress?: (settledBytes: number, totalBytes: number) => void
  /** For `ssh://host/path` and `host:path` URLs: the ssh command (`-e`, default `ssh`) and
   *  dsync's command on the remote host (`--remote-dsync`, default `dsync`). */
  readonly rsh?: string
  readonly remoteDsync?: string
  /** What the server says that concerns no file (e.g. that it waits for another session). */
  readonly onNotice?: (message: string) => void
  /** Aborting it ends the session; finished files stay, unfinished ones are left as they were. */
  readonly signal?: AbortSignal
}

function clientOptions(o: SyncOptions): sync.ClientOptions {
  return { ...o, token: o.token ?? null, exclude: [...(o.exclude ?? [])], signal: o.signal ?? never() }
}

/** `dsync push LOCAL_DIR URL`: sends `localDir` to the server at `url` (`ws[s]://host[:port][/subdir]`). */
export function push(localDir: string, url: string, o: SyncOptions = {}): Promise<sync.SyncResult> {
  return sync.push(localDir, url, clientOptions(o))
}

/** `dsync pull URL LOCAL_DIR`: brings the served tree into `localDir` (created if missing). */
export function pull(url: string, localDir: string, o: SyncOptions = {}): Promise<sync.SyncResult> {
  return sync.pull(url, localDir, clientOptions(o))
}

/** Options of `serve`: those of `dsync serve`, same defaults. */
export interface ServeOptions {
  /** The directory to serve (must exist). */
  readonly root: string
  /** Address to listen on; default 127.0.0.1. Without a token only loopback is allowed. */
  readonly host?: string
  /** Port; default 8730; 0 picks a free one (read it from the result's `port`). */
  readonly port?: number
  readonly token?: string | null
  /** PEM certificate and key: serve `wss://`. */
  readonly tls?: { readonly cert: Uint8Array; readonly key: Uint8Array }
  /** One line per session and per error; default: discarded. */
  readonly log?: (line: string) => void
  /** Aborting it stops the server, as `close()` does. */
  readonly signal?: AbortSignal
}

/** `dsync serve`: serves `root` to push and pull clients until `close()`. */
export function serve(o: ServeOptions): Promise<sync.SyncServer> {
  return sync.serve({
    root: o.root,
    host: o.host ?? '127.0.0.1',
    port: o.port ?? DEFAULT_PORT,
    token: o.token ?? null,
    ...(o.tls && { tls: { cert: o.tls.cert, key: o.tls.key } }),
    log: o.log ?? (() => undefined),
    signal: o.signal ?? never(),
  })
}

/** Options of `similarity`: those of `dsync similarity`, same defaults. */
export interface SimilarityOptions {
  readonly chunker?: ChunkerKind
  /** Average chunk size (block size for fsp/sbc), bytes; default 8 KiB. */
  readonly avg?: number
  readonly min?: number
  readonly max?: number
  readonly metric?: MetricName
  readonly threshold?: number
  readonly signal?: AbortSignal
}

/** `dsync similarity A B`: how similar two files are, by every metric, and the delta-or-whole verdict. */
export function similarity(a: string, b: string, o: SimilarityOptions = {}): Promise<SimilarityResult> {
  const { signal, ...rest } = o
  return measureSimilarity(a, b, { chunker: 'cdc', metric: DEFAULT_METRIC, threshold: DEFAULT_THRESHOLD, ...rest }, signal ?? never())
}

/** `dsync signature SEED SIGFILE`: writes the seed's block checksums to `sigfile` (atomically). */
export async function signature(
  seed: string,
  sigfile: string,
  o: { readonly blockSize?: number; readonly signal?: AbortSignal } = {},
): Promise<{ seedSize: number; blockSize: number; bytes: number }> {
  const signal = o.signal ?? never()
  const sig = await computeSignature(openFileSource(seed, { signal }), { size: await regularFileSize(seed), blockSize: o.blockSize, signal })
  const bytes = encodeSignature(sig)
  await writeAtomically(sigfile, (sink) => sink.write(bytes), { signal })
  return { seedSize: sig.seedSize, blockSize: sig.blockSize, bytes: bytes.length }
}

/** `dsync delta SIGFILE TARGET DELTAFILE`: writes the delta that turns the signed seed into `target`. */
export async function delta(sigfile: string, target: string, deltafile: string, o: { readonly signal?: AbortSignal } = {}): Promise<DeltaStats> {
  const signal = o.signal ?? never()
  if ((await regularFileSize(sigfile)) > MAX_SIGNATURE_BYTES) {
    throw new DsyncError('BAD_DATA', `${sigfile}: larger than any signature (${MAX_SIGNATURE_BYTES} bytes); is it the right file?`, { path: sigfile })
  }
  const sig = decodeSignature(await readFile(sigfile))
  await regularFileSize(target)
  const d = encodeDelta(sig, openFileSource(target, { signal }), { signal })
  await writeAtomically(deltafile, async (sink) => {
    for await (const bytes of d.bytes) await sink.write(bytes)
  }, { signal })
  return d.stats()
}

/** `dsync patch SEED DELTAFILE OUT`: rebuilds the target into `out`, verified by its SHA-256, atomically
 *  (`digest`; undefined for a delta of format version 2, verified by its XXH3-128 instead). */
export function patch(seed: string, deltafile: string, out: string, o: { readonly signal?: AbortSignal } = {}): Promise<{ size: number; digest: FileDigest | undefined }> {
  const signal = o.signal ?? never()
  return patchFile(seed, openFileSource(deltafile, { signal }), out, { signal })
}
