import { linkSync, lstatSync, unlinkSync, type Stats } from 'node:fs'
import { link, lstat, mkdir, rename, rm, statfs, symlink } from 'node:fs/promises'
import { dirname, join, posix } from 'node:path'
import { chunkBytes, chunkList, type Cutter, cutterFor } from '../chunk/index.js'
import {
  blockSizeForChange, blockSizeForRefinement, blockSizeForUnknownChange, changedRegions, computeRefineSignature, computeSignature, decide, decodeMatches, encodeRefineSignature,
  encodeSignature, identityDigest, IDENTITY_DELTA_MAX_BYTES, isFastCheck, isIdentity, matchesPass, MIN_MEASURABLE_CHUNKS, nextRefinement, passesThreshold, rankSeeds, sameCheck, secondSeed, smallestSeedBytes, targetHasher, type SecondSeed, type SeedCandidate, type SeedReader,
} from '../delta/index.js'
import { DsyncError, isDsyncError } from '../errors.js'
import {
  asFileError, fsError, HELD_SEED_BYTES, memorySeedReader, memorySeedSource, openFileSource, openFilesSource, openSeedsReader, patchFile, readSeedsWhole, removeStaleTemps, resolveInside, setMetadata,
  statStamp, syncDirectory, TEMP_PREFIX, unchangedWhileRead,
  IGNORE_FILE_NAME, isUnder, parentDir, writeAtomically, type TreeEntry,
} from '../fs/index.js'
import { FileDigester } from '../hash/index.js'
import { Fifo, MAX_SHOWN_CANDIDATES, PROBE_KEY_BYTES, PROTOCOL_VERSION, SUMMARY_PROTOCOL_VERSION, type Channel, type FileEntry, type Message } from '../net/index.js'
import { decodeSketch, estimateSimilarity, metricByName, profile, sketchStream } from '../similarity/index.js'
import { isBase, sameMtime, sampleChunks, updateSketchIndex, type FileRecord, type SketchIndex, type SyncBase } from '../store/index.js'
import type { Chunk, FileDigest } from '../types.js'
import { ByteQueue } from './byte-queue.js'
import { BundleReader } from './bundle.js'
import { checkOverwrite, conflictCopyPath } from './conflict.js'
import { deleteExtras, keepReason } from './delete-extras.js'
import { Semaphore } from './limit.js'
import { LocalFiles } from './local-files.js'
import { Mailbox } from './mailbox.js'
import { nearestInSize, similarlyNamed, type NamedFile } from './name-guess.js'
import { WINDOWED_PROBE_BYTES } from './probe.js'
import type { Action, FileEvent } from './report.js'
import { SendChain } from './send-chain.js'
import { sessionError, SessionScope } from './session-scope.js'
import { listWindow, peerChecksDirectFast, peerReadsWindows, senderEndsRounds, senderTakesMoves, speaksDirect, type RoleDeps } from './session.js'
import { sameSummary, TreeSummary } from './tree-summary.js'

/** Everything the receiver role needs, given by the flow (push on the server, pull on the client). */
export interface ReceiverDeps extends RoleDeps {
  readonly now: () => Date
  /** called with what the peer says in a `notice` that concerns no file */
  readonly onNotice?: (message: string) => void
  /** this side's tree, already walked (two-way sync walks it once for both roles); default:
   *  walked at the start */
  readonly files?: LocalFiles
  /** the version a file may be overwritten from without a conflict; default: its sync base
   *  (two-way sync: the version this side listed, so an edit made during the sync is kept) */
  readonly baseOf?: (path: string) => SyncBase | undefined
}

/** Candidate seeds looked at per file, beyond the file at the same path. */
const MAX_CANDIDATES = 4

/**
 * Files being fetched at once: each holds a temp file open and a plan at the sender. Without a
 * bound a tree of 20,000 new files opened 20,000 temp files (EMFILE). Many in flight keep
 * small-file syncs fast: fsyncs overlap (0.2 ms per small file at 16 in parallel against 1.0 ms
 * one at a time, measured here), and the sender streams several files at once.
 */
const MAX_FETCHES = 16

/** Moved files' old paths forgotten by the store at once, at the end (#maybeFinish): a commit
 *  for them all, in pieces of a bounded size. */
const FORGET_AT_ONCE = 1024

/**
 * Files asked for (`want`) and not yet settled. Each holds its chunk list here until it is
 * decided, so this bounds that memory whatever the size of the file list; 64 keeps the sender's
 * answers flowing while 16 files are fetched.
 */
const WANT_WINDOW = 64

/**
 * Chunks of chunk lists held at once, over all files (~100 bytes each in memory: ~25 MiB). A
 * legitimate large file sends a 1/8 sample (a 16 GiB file: ~256k chunks); past this budget a
 * list is cut short and its file measured from the part kept, so no peer can grow the memory.
 */
const MAX_HELD_CHUNKS = 256 * 1024

/** Files this large get their room checked before they are asked for, even before the disk
 *  has been found full: a statfs is nothing next to sending 64 MiB that cannot be written. */
const ROOM_CHECK_BYTES = 64 * 1024 * 1024

/** New files of at most this many chunks (of the minimum size) are asked for whole (#wantWhole). */
const WHOLE_WANT_CHUNKS = 4

/** A file asked for whole (one chunk when listed) is kept in memory as written, up to this, to
 *  chunk it for its record; more means it grew on the sender since, and it is read when needed. */
const WHOLE_KEPT_BYTES = 1024 * 1024
/**
 * A new path larger than this is probed before its chunk list is asked for (#probed). Below it
 * the list is ~16 chunks or fewer (8 KiB average), which the sender would send instead of a
 * probe anyway: the key only cost 7–14 bytes a file (60 KB on a first push of 20,000 files).
 */
const PROBE_ABOVE_BYTES = 128 * 1024
/** Free space kept beyond a file's own size (metadata, the store, other writers). */
const ROOM_MARGIN_BYTES = 1024 * 1024

/** True for a write that failed because the file system is full (or over quota). */
function isNoSpace(err: unknown): boolean {
  const cause = isDsyncError(err) ? err.cause : err
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  return code === 'ENOSPC' || code === 'EDQUOT'
}

/** Files smaller than this are not measured by sketch: a delta from the earlier version is
 *  the rule below 8 chunks anyway (decide), and a whole small file costs little. */
const SKETCH_MIN_FILE_BYTES = 64 * 1024

/**
 * Seeds smaller than this are sent in one round: a refined exchange costs a round trip per
 * round, and below it one block of literal per edit is little. bench/sync.ts "text edits" (50
 * of 500 20 KiB files, 3 small edits each): one round 75,664 B (1.29× rsync -az), refined from
 * 16 KiB 64,174 B (1.09×), wall 1.44 → 1.57 s (one run each, load ~2).
 */
const REFINE_MIN_SEED_BYTES = 16 * 1024

/**
 * Files of a folder a guess by name weighs for a renamed file (#renameSources), and names a
 * session weighs in all (#guessByName): ~0.4 µs each (name-guess.ts; names of ~25 characters,
 * by hand), so a guess costs at most ~0.1 ms and a session ~0.1 s, whatever a first push of
 * thousands of new small files into folders of other files (dated logs beside older ones) asks.
 */
const MAX_RENAME_SOURCES = 256
const MAX_RENAME_NAMES_WEIGHED = 256 * 1024
/** Times a file is asked for when it keeps changing on the sender while being sent. */
const MAX_SOURCE_ATTEMPTS = 3

/**
 * The file sent is not the one listed. A whole file that does not match its delta's digest says
 * so too: with no seed nothing else can be wrong but the bytes read, and a sender hashes a file
 * it sends whole only once, for its list (encodeDelta's `digest`).
 */
function sourceChanged(err: unknown, seed: string | null): boolean {
  return isDsyncError(err, 'SOURCE_CHANGED') || (seed === null && isDsyncError(err, 'DIGEST_MISMATCH'))
}

/** Files a summary stood for whose bases are seen to between two turns of the event loop
 *  (#recordImplied): ~10 ms of lmdb reads here, so other sessions' sockets are not kept waiting. */
const IMPLIED_BATCH = 8192

/** Its data ended with none sent, neither for a change on the sender (its notice) nor in answer
 *  to a cancel from here: the sender could not read the file. */
function senderGaveUp(t: Transfer): boolean {
  return t.dataEnded === true && t.dataSeen !== true && t.changedOnSender !== true && t.cancelled !== true
}

/** Sent whole after a probe that found nothing: no list came, and none was asked for. */
function wholeAfterProbe(t: Transfer): boolean {
  return t.probeAnswered === true && t.listAsked !== true
}

/** Came with no chunk list: asked for whole (`want.whole`), whole after its probe, or planned
 *  against its old version here at once (`want.direct`). */
function cameWithoutList(t: Transfer): boolean {
  return t.whole === true || t.direct === true || wholeAfterProbe(t)
}

/**
 * A changed file at least this large, whose old version here is the one last synced, is planned
 * against that version at once (`want.direct`, PROTOCOL.md §4.12): no chunk list. Its list cost
 * the sender a whole read, chunked and hashed (~2.2 s a GiB here; ~0.1 s for 50 MiB), and this
 * side ranked seeds by it (~45 ms for 50 MiB) before round 1 could start: 1 GiB with 1,024
 * scattered 1 KiB overwrites spent ~2.3 of its ~7–8 s there. What is lost for such a file: a
 * seed elsewhere in the tree, a second seed, and a copy found by digest; the old version is the
 * seed (its similarity is measured on the matches, as any trial's), and a file only touched is
 * rewritten from it, as rsync does. From 8 MiB (was 64): by hand, one file changed in place,
 * list against direct (both ways, with round 1 sized by blockSizeForUnknownChange): 30 MiB with
 * 1 KiB inserted 0.45–0.60 → 0.42–0.44 s and 15,797 → 10,008 B; 50 MiB with 100 × 64 B
 * overwrites 0.80–0.83 → 0.53–0.62 s and ~77 → 57 KB; 20 MiB of log with 1 MiB appended
 * 0.45–0.53 → 0.38–0.47 s and 341,844 → 337,545 B. Below it a list costs the sender under
 * ~20 ms, and keeps a seed elsewhere and a copy by digest for the files most often copied.
 */
const DIRECT_MIN_BYTES = 8 * 1024 * 1024

/**
 * ...and a smaller one too, from REFINE_MIN_SEED_BYTES up to this, when its size changed: its old
 * version is its seed whatever else its list would show, and one no longer like it (overwritten
 * with a copy of another file, say) is given up after round 1 and asked for again with its list
 * (§4.12), which finds the copy. Its list and a round trip are saved. By hand, text edits (50 of
 * 500 files of 20 KiB): 42.0 → 35.6 KiB on the wire; 6 pushes each in turns, 420–620 ms
 * (median 557) → 427–661 (median 481). bench/bytes.ts "source edits" (50 files of 110 KiB):
 * 78,365 → 65,739 B. A file that keeps its size (an overwrite in place, a touch: its list says
 * at once that nothing changed) is listed, as is one over this: a list above 256 chunks goes as
 * a sample (SAMPLE_ABOVE_CHUNKS), and files of 2–8 MiB keep the rule above. (A first version
 * listed any file whose new size some file here had, for its copy: the index of the tree's
 * sizes cost ~0.15 s a session on a tree of 100,000 files.)
 */
const SMALL_DIRECT_MAX_BYTES = 2 * 1024 * 1024

/** A file's chunks as a record keeps them: all, or the sample of a large file. */
type ChunkList = Pick<FileRecord, 'chunks' | 'sampled'>

/** A file the receiver asks the sender for, from `want` until it is settled. */
interface Transfer {
  readonly id: number
  readonly entry: FileEntry
  /** the receiver's current file at that path, if it is a regular file */
  readonly current: TreeEntry | undefined
  /** 1 for the first request; more when the file changed on the sender while it was sent */
  readonly attempt: number
  /** its `want` has gone out (ids of files not yet asked for are unknown to the sender) */
  wanted: boolean
  conflict: boolean
  /** the chunk list so far (complete once the piece without `more` arrived) */
  chunks: Chunk[]
  /** chunks announced by the sender, including any not kept (over the memory budget) */
  listed: number
  /** the chunk list is not the whole file's: a sample (large file) or cut short (budget) */
  partialList: boolean
  /** the sender sent a sample of the list (a large file) */
  sampled?: boolean
  /** size and digest of the file the chunk list describes: what the rebuilt file must be */
  size?: number
  digest?: FileDigest
  queue?: ByteQueue
  /** retried whole after a delta rebuilt the wrong content (a weak-hash false match) */
  retried: boolean
  /** asked for again after the disk was full, to be written alone */
  retriedForSpace?: boolean
  /** the sender said (a SOURCE_CHANGED notice) that the file changed while it sent it: its
   *  data ends short, and the file is asked for again as for a digest that does not match */
  changedOnSender?: boolean
  /** the sender answers a `sketchWant` for it (version 2, files up to 64 MiB) */
  sketchable?: boolean
  /** the sketch asked for, once asked (see #sketchSimilarity) */
  sketch?: Mailbox<Uint8Array | null>
  /** the sender runs refinement rounds for it (version 2) */
  refinable?: boolean
  /** the match lists of a refined exchange, once planned (see #refinedPlan) */
  matches?: Mailbox<Uint8Array>
  /** asked for whole, with no chunk list (#wantWhole) */
  whole?: boolean
  /** planned at once against its old version here, with no chunk list (#wantDirect) */
  direct?: boolean
  /** its `dataEnd` came */
  dataEnded?: boolean
  /** given up here during its rounds (`refine.cancel` sent): the `dataEnd` that answers it says
   *  nothing of the sender */
  cancelled?: boolean
  /** planned direct, and its last match list copies its old version whole, in place */
  identical?: boolean
  /** planned direct, and its rounds put its old version below the threshold: given up, and
   *  asked for again with its list (#rounds) */
  askListed?: boolean
  /** asked for a probe first (a new path: #probed); then whether it came, and whether the
   *  chunk list was asked for after it */
  probe?: boolean
  probeAnswered?: boolean
  listAsked?: boolean
  /** a seed its probe's anchors found in the sketch index (#seedByAnchors), weighed with the rest */
  sketchSeed?: string
  /** the file taken as its earlier version by name (#guessByName: moved or renamed), a guess */
  nameGuess?: string
  /** some of its data (`data`, or all of it in a `bundle`) has come for the current request */
  dataSeen?: boolean
  /** all of it came in a `bundle` */
  bundled?: boolean
}

/**
 * The receiver role: the side that has the seeds. It reads the sender's file list, decides per
 * file (unchanged, local copy, delta against the most similar file it has, or whole), asks for
 * and rebuilds what it needs (atomically, verified), applies --delete, and reports every
 * decision. Runs over any Channel; returns when the sender closes the session.
 *
 * Its lifetime is one SessionScope: a dropped peer, a failed task or an abort cancels every
 * signature, writer and wait of the session, and `run` returns only when all have stopped.
 */
export async function runReceiver(channel: Channel, deps: ReceiverDeps): Promise<void> {
  return new Receiver(channel, deps).run()
}

class Receiver {
  readonly #out: SendChain
  readonly #scope: SessionScope
  readonly #signal: AbortSignal
  /** every file listed and not yet settled: waiting for its `want`, or wanted */
  readonly #transfers = new Map<number, Transfer>()
  /** listed files waiting for room in the want window, in list order */
  readonly #waiting = new Fifo<Transfer>()
  #wanted = 0
  #heldChunks = 0
  /** paths listed (in `files` messages) */
  readonly #seen = new Set<string>()
  /** directories a summary stood for (§4.9), found the same here: nothing under them is listed,
   *  and their files' bases are seen to after `done` (#recordImplied). Directories, not their
   *  entries: a no-op of 1,000,000 files held a million paths here and in #seen. */
  readonly #impliedDirs = new Set<string>()
  /** paths the sender could not read (its notices): not listed, yet not gone; --delete keeps
   *  them and what is under them */
  readonly #unread = new Set<string>()
  readonly #dirs: FileEntry[] = []
  /** directories with renamed-in files whose fsync is still due (done once, at the end) */
  readonly #dirty = new Set<string>()
  /** old path → new path of the files this session renamed (#moveLocal): a seed chosen by
   *  its old path is read at its new one; the store forgets the old paths at the end */
  readonly #movedTo = new Map<string, string>()
  /** path → transfers reading it as their seed now (#fetch): none of them is renamed away */
  readonly #seedsInUse = new Map<string, number>()
  /** the sender listed an ignore file this session writes: the rules --delete goes by may
   *  change, so no file is renamed ahead of it (#movable) */
  #rulesChange = false
  readonly #fetchSlots: Semaphore
  /** Once the disk has been found full, files are written one at a time (this one slot), so a
   *  file that fits is written instead of all failing together; and each file's room is
   *  checked before a byte of it is asked for. */
  readonly #alone: Semaphore
  #diskFull = false
  /** base name → local files with it (see #filesByName), for guessing the source of a moved file */
  #byName: Map<string, string[]> | undefined
  /** folder → its files a renamed file may have been (#renameSources) */
  readonly #renameSourcesIn = new Map<string, NamedFile[]>()
  /** names weighed by rename guesses this session (MAX_RENAME_NAMES_WEIGHED) */
  #renameNamesWeighed = 0
  readonly #metric
  /** the tree's sketch index, brought up to date once a session when first needed (#sketchIndex) */
  #sketches: Promise<SketchIndex> | undefined
  /** the session's bundles, unpacked in the order they come (each may use the ones before) */
  readonly #bundles = new BundleReader()
  /** this side's tree: what the walk found, then what the session wrote */
  #files!: LocalFiles
  #nextId = 1
  #listDone = false
  /** §4.13: entries a sender may list ahead of this side's taking them in (undefined: a sender
   *  before version 10, whose list is not paced); entries listed so far, and how many it was
   *  allowed when last told (the window, before any `listRoom`) */
  readonly #listWindow: number | undefined
  #entriesListed = 0
  #listAllowed = 0
  /** this side's directory summaries (§4.9), taken once the walk is done (#scan), or when the
   *  first `summary` comes: before the session has written anything */
  #summary: TreeSummary | undefined
  /** directories offered by summary, and those of them whose listing was asked for */
  readonly #summaryOffered = new Set<string>()
  readonly #summaryAsked = new Set<string>()
  #finished = false

  constructor(
    private readonly channel: Channel,
    private readonly d: ReceiverDeps,
  ) {
    this.#out = new SendChain(channel)
    this.#scope = new SessionScope(d.signal, (err) => channel.fail(sessionError(err, 'receiver')))
    this.#signal = this.#scope.signal
    this.#fetchSlots = new Semaphore(MAX_FETCHES, this.#signal)
    this.#alone = new Semaphore(1, this.#signal)
    this.#metric = metricByName(d.options.metric)
    this.#listWindow = listWindow(d)
    this.#listAllowed = this.#listWindow ?? Infinity
  }

  async run(): Promise<void> {
    try {
      await this.#scan()
      for await (const msg of this.channel.messages()) {
        await this.#handle(msg)
        if (this.#scope.failure !== undefined) throw this.#scope.failure
      }
      if (this.#scope.failure !== undefined) throw this.#scope.failure
      if (!this.#finished || this.#transfers.size > 0) {
        throw new DsyncError('NETWORK', 'the sender closed the session before it was complete; run the command again')
      }
    } catch (err) {
      // The first failure is the one to tell (a failed task closes the channel, which then
      // also ends the message loop). Everything of the session stops: writers remove their
      // temp files, the old files stay.
      const first = this.#scope.failure ?? err
      this.#scope.abort(isDsyncError(first) ? first : new DsyncError('NETWORK', 'connection lost during the transfer', { cause: first }))
      await this.#scope.settled().catch(() => undefined)
      throw first
    }
    await this.#scope.settled()
    await this.#files.flush()
    await this.#out.flushed()
    this.d.report.countScan(this.#files.filesRead)
  }

  async #scan(): Promise<void> {
    if (this.d.files !== undefined) {
      this.#files = this.d.files
      this.#knowWalkedDirs()
      return
    }
    const temps: string[] = []
    this.#files = await LocalFiles.scan(this.d.root, this.d.store, {
      params: this.d.params,
      exclude: this.d.options.exclude,
      signal: this.#signal,
      onTemp: (p) => temps.push(p),
      // Policy: a file of this tree that cannot be read is no seed and no quick-check match; if
      // the sender lists its path, writing it succeeds or fails on its own, and is reported then.
      onError: () => undefined,
    })
    // Temp files of dead sessions (a kill, a crash): this session holds the tree now.
    if (!this.d.options.dryRun) await removeStaleTemps(this.d.root, temps)
    this.#knowWalkedDirs()
    // A sender of version 4 on offers its list by directory summaries (§4.9) unless it lists
    // digests (checksum): this side's are made now, while the sender makes its own, not once its
    // first has come. A no-op of 100,000 files: the receiver sat idle ~0.1 s, then worked ~0.1 s.
    if ((this.d.version ?? PROTOCOL_VERSION) >= SUMMARY_PROTOCOL_VERSION && !this.d.options.checksum) this.#summary = TreeSummary.from(this.#files.walked)
  }

  #cutterMade: Cutter | undefined
  /** One cutter for the session's chunking (made when first needed). */
  #cutter(): Cutter {
    return (this.#cutterMade ??= cutterFor(this.d.params))
  }

  /** base name → local files with it, made the first time a moved file's source is guessed
   *  (most sessions never do: a no-op of 100,000 files built it for nothing). */
  #filesByName(): Map<string, string[]> {
    // Made once (an empty map too: a tree with no files made it again for every new file).
    if (this.#byName !== undefined) return this.#byName
    this.#byName = new Map()
    // The tree as the session found it: a moved file's source was there before it began, and
    // whether a name is new (#wantWhole) must not depend on how far the session has written.
    for (const e of this.#files.walked.under()) {
      if (e.kind !== 'file') continue
      const name = posix.basename(e.path)
      const list = this.#byName.get(name)
      if (list === undefined) this.#byName.set(name, [e.path])
      else list.push(e.path)
    }
    return this.#byName
  }

  async #handle(msg: Message): Promise<void> {
    switch (msg.t) {
      case 'files':
        this.#entriesListed += msg.entries.length
        if (this.#entriesListed > this.#listAllowed) {
          throw new DsyncError('BAD_MESSAGE', `the sender listed ${this.#entriesListed} entries where ${this.#listAllowed} were allowed (PROTOCOL.md §4.13)`)
        }
        this.d.onListed?.(msg.entries)
        for (const e of msg.entries) await this.#entry(e)
        return this.#roomForList()
      case 'summary':
        return this.#summarized(msg)
      case 'filesEnd':
        this.#listDone = true
        this.#maybeFinish()
        return
      case 'chunks':
        return this.#chunkPiece(msg)
      case 'probe':
        return this.#probed(msg)
      case 'data': {
        const t = this.#streaming(msg.id)
        if (t !== undefined) t.dataSeen = true
        return t?.queue?.push(msg.bytes)
      }
      case 'dataEnd': {
        const t = this.#streaming(msg.id)
        t?.queue?.end()
        if (t !== undefined) t.dataEnded = true
        // Ended before its refined exchange did: the sender could not read the file (it said
        // why in a notice), or it changed as it was read (SOURCE_CHANGED: asked for again).
        const changed = t?.changedOnSender === true
        const path = t?.entry.path
        t?.matches?.close(() => changed
          ? new DsyncError('SOURCE_CHANGED', `${path}: changed on the sender while it was read`, { path })
          : new DsyncError('IO', `${path}: the sender sent nothing for it (it could not read it: its report says why)`, { path }))
        return
      }
      case 'bundle':
        // Whole data streams of several files (§4.7): each goes to its writer, and is complete.
        for (const s of this.#bundles.unpack(msg)) {
          const t = this.#streaming(s.id)
          if (t === undefined) continue
          if (t.dataSeen === true) throw new DsyncError('BAD_MESSAGE', `bundle with file id ${s.id}, whose data has come already`)
          t.dataSeen = true
          t.bundled = true
          await t.queue!.push(s.bytes)
          t.queue!.end()
        }
        return
      case 'matches': {
        const box = this.#transfers.get(msg.id)?.matches
        if (box === undefined) throw new DsyncError('BAD_MESSAGE', `matches for file id ${msg.id}, which has no refined exchange waiting for them`)
        return box.push(msg.list)
      }
      case 'sketch': {
        const box = this.#transfers.get(msg.id)?.sketch
        if (box === undefined) throw new DsyncError('BAD_MESSAGE', `sketch for file id ${msg.id}, which was not asked for`)
        return box.push(msg.sketch)
      }
      case 'notice': {
        // A file whose data is coming changed on the sender as it was read (it had no digest to
        // send before its data: a large file probed by windows): what came is not written, and
        // the file is asked for again.
        const changed = msg.code === 'SOURCE_CHANGED' && msg.path !== undefined ? this.#streamingPath(msg.path) : undefined
        if (changed !== undefined) {
          changed.changedOnSender = true
          return
        }
        // A file the sender could not read: its error, here too (it is not coming).
        if (msg.path !== undefined) {
          this.d.report.add({ path: msg.path, action: 'error', code: msg.code ?? 'IO', message: msg.message })
          this.#unread.add(msg.path)
        } else this.d.onNotice?.(msg.message)
        return
      }
      default:
        throw new DsyncError('BAD_MESSAGE', `unexpected "${msg.t}" message from the sender`)
    }
  }

  /** One piece of a file's chunk list. The list is bounded by what the file's size allows
   *  (BAD_MESSAGE past it) and by the session's memory budget (cut short past it). */
  async #chunkPiece(msg: Extract<Message, { t: 'chunks' }>): Promise<void> {
    const t = this.#transfer(msg.id)
    if (wholeAfterProbe(t)) throw new DsyncError('BAD_MESSAGE', `chunk list for file id ${msg.id} after its probe, not asked for`)
    if ((t.queue !== undefined && t.whole !== true) || t.digest !== undefined) throw new DsyncError('BAD_MESSAGE', `chunk list for file id ${msg.id} after its list was complete`)
    if (t.size !== undefined && t.size !== msg.size) throw new DsyncError('BAD_MESSAGE', `chunk list of ${t.entry.path}: pieces disagree on the file's size`)
    t.size = msg.size
    t.listed += msg.chunks.length
    const most = Math.floor(msg.size / this.d.params.min) + 1
    if (t.listed > most) {
      throw new DsyncError('BAD_MESSAGE', `chunk list of ${t.entry.path} holds more than ${most} chunks, more than a file of ${msg.size} bytes can have`)
    }
    const room = Math.max(0, Math.min(msg.chunks.length, MAX_HELD_CHUNKS - this.#heldChunks))
    for (let i = 0; i < room; i++) t.chunks.push(msg.chunks[i]!)
    this.#heldChunks += room
    if (room < msg.chunks.length || msg.sampled === true) t.partialList = true
    if (msg.sampled === true) t.sampled = true
    if (msg.more === true) return
    // No digest: the sender could not read the file after all (it said why in a notice). A
    // fetch already waiting (asked for whole, of a sender that predates it) ends on no data.
    if (msg.digest === undefined && t.whole === true) return t.queue?.end()
    if (msg.digest === undefined) {
      this.#settle(t)
      return this.#maybeFinish()
    }
    t.digest = msg.digest
    // A sender that predates `want.whole` answers it with the list: the plan it then waits for
    // says whole, and the data goes to the fetch already waiting for it.
    if (t.whole === true) return this.#out.post({ t: 'plan', id: t.id, method: 'whole', seed: null, similarity: 0, signature: null })
    if (msg.sketchable === true) t.sketchable = true
    if (msg.refinable === true) t.refinable = true
    this.#decideInTask(t)
  }

  /** The transfer data is arriving for; undefined when it already ended here (a writer that
   *  failed early stops listening while the sender is still streaming). */
  #streaming(id: number): Transfer | undefined {
    const t = this.#transfers.get(id)
    if (t === undefined && id > 0 && id < this.#nextId) return undefined
    if (t?.queue === undefined) throw new DsyncError('BAD_MESSAGE', `data for file id ${id}, which has no plan`)
    // A bundle held all of it: nothing more may come for this request.
    if (t.bundled === true) throw new DsyncError('BAD_MESSAGE', `data for file id ${id}, which came whole in a bundle`)
    return t
  }

  /** The transfer whose data is coming for `path` (its queue open), if any: at most the want
   *  window's 64 are in flight. */
  #streamingPath(path: string): Transfer | undefined {
    for (const t of this.#transfers.values()) if (t.entry.path === path && t.queue !== undefined && (t.dataSeen === true || t.matches !== undefined)) return t
    return undefined
  }

  #transfer(id: number): Transfer {
    const t = this.#transfers.get(id)
    if (t === undefined || !t.wanted) {
      throw new DsyncError('BAD_MESSAGE', `message for file id ${id}, which was not asked for`)
    }
    return t
  }

  /** Records an event locally and tells the sender (unchanged files cost nothing on the wire). */
  #event(e: FileEvent, id = 0): void {
    this.d.report.add(e)
    this.d.onSettled?.(e)
    if (e.action === 'unchanged') return
    this.#out.post({
      t: 'result',
      id,
      path: e.path,
      action: e.action,
      ok: e.action !== 'error',
      ...(e.code !== undefined && { code: e.code }),
      ...(e.message !== undefined && { message: e.message }),
      ...(e.seed !== undefined && { seed: e.seed }),
      ...(e.similarity !== undefined && { similarity: e.similarity }),
      ...(e.conflictCopy !== undefined && { conflictCopy: e.conflictCopy }),
      ...(e.candidates !== undefined && { candidates: [...e.candidates] }),
    })
  }

  /** A per-file failure: reported, and the session goes on. Session-wide ones are rethrown. */
  #fail(path: string, err: unknown, id = 0): void {
    // A peer's malformed message (a bad match list or sketch, found while settling one file)
    // makes the session meaningless, as a malformed chunk list does: it ends it.
    if (!isDsyncError(err) || err.code === 'ABORTED' || err.code === 'NETWORK' || err.code === 'BAD_MESSAGE' || this.#signal.aborted) throw err
    this.#event({ path, action: 'error', code: err.code, message: err.message }, id)
  }

  async #entry(e: FileEntry): Promise<void> {
    if (this.#seen.has(e.path)) {
      // A list names each path once. A second entry could turn a path the first one made into
      // something else (a symlink listed, then a file at the same path: metadata and seeds
      // would then act through the link). Refused; the first one stands.
      this.#fail(e.path, new DsyncError('UNSAFE_PATH', `${e.path}: listed twice by the sender; the second entry was refused`, { path: e.path }))
      return
    }
    // Offered by summary (§4.9), a list names only what is directly in a directory asked for:
    // nothing under one found the same (it stands for all of it, #summarized).
    if (this.#summaryOffered.size > 0 && !this.#summaryAsked.has(parentDir(e.path))) {
      this.#fail(e.path, new DsyncError('UNSAFE_PATH', `${e.path}: listed outside the directories asked for; refused`, { path: e.path }))
      return
    }
    this.#seen.add(e.path)
    try {
      if (e.kind === 'dir') await this.#dir(e)
      else if (e.kind === 'symlink') await this.#symlink(e)
      else await this.#file(e)
    } catch (err) {
      this.#fail(e.path, asFileError(err, e.path, `write the ${e.kind}`))
    }
  }

  /**
   * Directories offered by summary (§4.9): one found the same here stands for everything under
   * it, as if listed (each file is unchanged by the quick check, which the summary covers);
   * the others are asked for, and come listed, their subdirectories offered in turn. The answer
   * goes first: the sender lists the next level while this side settles this one.
   */
  async #summarized(msg: Extract<Message, { t: 'summary' }>): Promise<void> {
    if (this.#listDone) throw new DsyncError('BAD_MESSAGE', 'summary after the end of the file list')
    this.#summary ??= TreeSummary.from(this.#files.walked)
    const asked: string[] = []
    const same: string[] = []
    for (const { path, hash } of msg.dirs) {
      // The root first, then only subdirectories of directories asked for, each once: a sender
      // cannot make this side settle anything twice.
      // (The root's only before anything is listed: it may stand for the whole tree.)
      const expected = path === '' ? this.#summaryOffered.size === 0 && this.#seen.size === 0 : this.#summaryAsked.has(parentDir(path))
      if (!expected || this.#summaryOffered.has(path)) throw new DsyncError('BAD_MESSAGE', `summary of ${path === '' ? 'the root' : path}, which was not asked for`)
      this.#summaryOffered.add(path)
      const mine = this.#summary.hash(path)
      if (mine !== undefined && sameSummary(mine, hash)) same.push(path)
      else {
        asked.push(path)
        this.#summaryAsked.add(path)
      }
    }
    this.#out.post({ t: 'summaryWant', paths: asked })
    // Settling what the summaries stand for awaits nothing but microtasks: let the answer (a
    // batch goes out on setImmediate) leave first, so the sender lists the next level meanwhile.
    if (same.length > 0 && asked.length > 0) await new Promise((resolve) => setImmediate(resolve))
    // Each file under them is as if listed, and unchanged. Nothing under them is listed (the
    // sender lists only directories asked for, #entry), so none is settled twice.
    const summary = this.#summary
    for (const dir of same) {
      this.#impliedDirs.add(dir)
      this.d.onStoodFor?.(dir, summary)
      if (!this.d.report.wantsEachUnchanged) {
        const { files, bytes } = summary.totals(dir)
        this.d.report.countFiles(files, bytes)
        this.d.report.countUnchanged(files, bytes)
        continue
      }
      for (const e of summary.under(dir)) {
        if (e.kind !== 'file') continue
        this.d.report.countFiles(1, e.size)
        this.#event({ path: e.path, action: 'unchanged', size: e.size })
      }
    }
  }

  /**
   * The bases of the files summaries stood for, recorded where they have none of their size and
   * time yet (a first sync), as #sameContent records a listed file's. Run after `done`, while the
   * session still holds the tree (the next session sees them): the sender need not wait for one
   * lmdb read a file (a no-op of 100,000 files: ~0.2 s) or, on a first sync of two equal trees,
   * the writes. Nothing else of the session reads these bases (--delete deletes no file a
   * summary stood for), and bases lost to a crash in between are made again by the next sync's
   * quick check.
   *
   * Folder by folder, each one's cover noted once all under it is seen to (Store.covered): a
   * folder found as it was then is passed over whole. A change in one folder of 200,000 files
   * made this read every base twice, in its own session (the folders beside it) and in the next
   * no-op (the root's cover gone): 0.8 and 1.2 s of the server's CPU.
   */
  async #recordImplied(): Promise<void> {
    const turn = (): Promise<unknown> => new Promise((resolve) => setImmediate(resolve))
    await turn() // `done` leaves first (a batch goes out on setImmediate)
    try {
      if (this.d.options.dryRun || this.#signal.aborted) return
      const summary = this.#summary!
      const store = this.d.store
      let bases: [string, SyncBase][] = []
      /** folders seen to since the last write, noted with its bases: all under each is in it
       *  or before it (a folder is noted once all under it is), and no later write is under
       *  one (a base written voids its folders' covers) */
      let covers: [string, Uint8Array][] = []
      let files = 0
      // Many in one transaction: a first sync of two equal trees of 100,000 files wrote them
      // one transaction each (0.9 of the receiver's 2.6 CPU s).
      const write = async (): Promise<void> => {
        await store.setBases(bases, covers)
        bases = []
        covers = []
        await turn()
      }
      const seeTo = async (dir: string): Promise<boolean> => {
        const hash = summary.hash(dir)! // a summary made it
        if (store.covered(dir, hash)) return true
        for (const e of summary.children(dir)) {
          if (e.kind === 'dir' && !(await seeTo(e.path))) return false
          if (e.kind !== 'file') continue
          // After a sync, its base says so already: nothing to record, nothing to read (the
          // record's digest decoded a whole chunk list per file: 0.3 of the receiver's 2.2
          // CPU s in a no-op of 100,000 files).
          if (!store.baseHasStat(e.path, e)) {
            // A record read this session (a seed) counts only if it is of this size and time.
            const rec = this.#files.known(e.path)
            const digest = rec !== undefined && rec.size === e.size && rec.mtimeMs === e.mtimeMs ? rec.digest : undefined
            bases.push([e.path, { ...(digest !== undefined && { digest }), size: e.size, mtimeMs: e.mtimeMs }])
          }
          if (++files % IMPLIED_BATCH !== 0) continue
          if (this.#signal.aborted) return false
          await write()
        }
        covers.push([dir, hash])
        return true
      }
      for (const dir of this.#impliedDirs) if (!(await seeTo(dir))) return
      await write()
    } catch {
      // Policy: the sender was told `done`, and these bases are the quick check's to make
      // again next time; a store that cannot write fails the next session that needs it.
    }
  }

  #typeClash(e: FileEntry, cur: TreeEntry): never {
    throw new DsyncError(
      'NOT_A_FILE',
      `${e.path}: is a ${cur.kind} on the receiver but a ${e.kind} on the sender; remove one of them and sync again`,
      { path: e.path },
    )
  }

  async #dir(e: FileEntry): Promise<void> {
    const cur = this.#files.get(e.path)
    if (cur !== undefined && cur.kind !== 'dir') this.#typeClash(e, cur)
    this.#dirs.push(e)
    if (cur !== undefined) {
      if (cur.mode !== e.mode && !this.d.options.dryRun) await setMetadata(await this.#abs(e.path), { mode: e.mode }, { directory: true })
      return
    }
    if (!this.d.options.dryRun) {
      await mkdir(await this.#abs(e.path), { mode: e.mode })
      this.#files.dirs.add(e.path)
      this.#files.set({ path: e.path, kind: 'dir', size: 0, mtimeMs: e.mtimeMs, mode: e.mode })
    }
    this.#event({ path: e.path, action: 'dir' })
  }

  async #symlink(e: FileEntry): Promise<void> {
    const cur = this.#files.get(e.path)
    if (cur?.kind === 'symlink' && cur.target === e.target) return
    if (cur?.kind === 'dir') this.#typeClash(e, cur)
    if (!this.d.options.dryRun) {
      // Made under a temp name and renamed over: the path is never missing, never followed.
      const abs = await resolveInside(this.d.root, e.path, { allowFinalSymlink: true })
      const tmp = join(dirname(abs), `${TEMP_PREFIX}${process.pid}-${posix.basename(e.path)}`)
      await rm(tmp, { force: true })
      await symlink(e.target ?? '', tmp)
      await rename(tmp, abs)
      // No longer a file here: never a seed, never a quick-check match.
      this.#files.set({ path: e.path, kind: 'symlink', size: 0, mtimeMs: e.mtimeMs, mode: e.mode, target: e.target ?? '' })
    }
    this.#event({ path: e.path, action: 'symlink', message: e.target })
  }

  async #file(e: FileEntry): Promise<void> {
    this.d.report.countFiles(1, e.size)
    // Refuse a path under a symlink (or any unsafe path) before asking for a single byte.
    await this.#abs(e.path)
    const cur = this.#files.get(e.path)
    if (cur !== undefined && cur.kind !== 'file') this.#typeClash(e, cur)
    // rsync's quick check: same size and mtime is the same file, read on neither side. The
    // list carries no digests (32 bytes a file: most of a no-op's bytes); a changed file's
    // comes with its chunks.
    if (e.digest === undefined && cur !== undefined && cur.size === e.size && sameMtime(cur.mtimeMs, e.mtimeMs)) {
      return this.#sameContent(e, cur, this.#files.known(e.path)?.digest)
    }
    if (posix.basename(e.path) === IGNORE_FILE_NAME) this.#rulesChange = true
    const t = this.#newTransfer(e, cur, 1)
    if (e.digest !== undefined && (await this.#resolveLocally(t, e.digest))) return
    if (cur === undefined && e.digest === undefined) {
      if (this.#wantWhole(e)) t.whole = true
      else if (this.#wantProbe(e)) t.probe = true
    } else if (this.#wantDirect(e, cur)) t.direct = true
    this.#enqueue(t)
  }

  /**
   * A probe (PROTOCOL.md §4.6): a few content keys of a file at a new path, and its digest when
   * a file of its size is here. A copy is made locally; a key found in the content index asks
   * for the chunk list after all (the file is then decided as any other); otherwise nothing here
   * can be its seed, and it comes whole. A new 1 MiB file cost a 2.5 KB chunk list before.
   */
  #probed(msg: Extract<Message, { t: 'probe' }>): void {
    const t = this.#transfer(msg.id)
    if (t.probe !== true || t.probeAnswered === true || t.listed > 0) throw new DsyncError('BAD_MESSAGE', `probe for file id ${msg.id}, which was not asked for one`)
    t.probeAnswered = true
    t.size = msg.size
    this.#inFetchSlot(async () => {
      // A large file's list is asked for whatever the keys say: it becomes the file's record (a
      // sample above 256 chunks), which chunking the file here as it is written would otherwise
      // make. That cost the receiver 0.35 s of CPU per 256 MiB (+17%, wall +15%) to save 100 KB
      // (0.04%). (Such a file is probed only for its digest: #wantProbe.) Not a file over
      // WINDOWED_PROBE_BYTES probed by windows: its list would cost the sender a whole read
      // before the first byte goes; sent whole, it gets its record when first read as a seed.
      let wantList = msg.size > WHOLE_KEPT_BYTES && (msg.size <= WINDOWED_PROBE_BYTES || msg.digest !== undefined)
      try {
        if (msg.digest !== undefined && (await this.#resolveLocally(t, msg.digest))) return this.#settle(t)
        // The index as it stands first; the rest of the tree is read only when it finds nothing.
        wantList ||= this.#probeFinds(msg.keys)
        if (!wantList) {
          await this.#files.indexFrom(smallestSeedBytes(msg.size, this.d.options.threshold))
          wantList = this.#probeFinds(msg.keys)
        }
        // Edits closer than a chunk leave no whole chunk in common (bench/seeds.ts: scattered
        // edits never found their base): the sketch's anchors, a few hundred bytes apart, may.
        if (!wantList && msg.anchors !== undefined && msg.anchors.length > 0) {
          t.sketchSeed = await this.#seedByAnchors(msg.anchors, t.entry.path)
          wantList = t.sketchSeed !== undefined
        }
      } catch (err) {
        this.#fail(t.entry.path, asFileError(err, t.entry.path, 'settle it'), t.id)
        return this.#settle(t)
      }
      if (wantList) {
        t.listAsked = true
        t.size = undefined // the list says the size of the file it describes (it may have changed)
        return this.#out.post({ t: 'chunksWant', id: t.id })
      }
      if (msg.digest !== undefined) t.digest = msg.digest
      const event: FileEvent = { path: t.entry.path, action: 'new', size: msg.size }
      if (this.d.options.dryRun) {
        this.#event(event, t.id)
        return this.#settle(t)
      }
      return this.#fetch(t, null, event)
    })
  }

  /** The tree's sketch index (the one `dsync similar` keeps), brought up to date once a session
   *  from the session's own listing (not a second walk): files whose size and mtime it knows are
   *  not read again, nor files below SKETCH_MIN_FILE_BYTES, which are no seed a probe looks for. */
  #sketchIndex(): Promise<SketchIndex> {
    return (this.#sketches ??= (async () => {
      const index = this.d.store.sketchIndex()
      // Policy: a file that cannot be read is no seed; the scan goes on.
      await updateSketchIndex(this.d.root, index, { signal: this.#signal, onError: () => undefined, entries: this.#files.entries(), minSize: SKETCH_MIN_FILE_BYTES })
      return index
    })())
  }

  /** The current file here posted under most of a probe's anchors (PROTOCOL.md §4.6), if any. */
  async #seedByAnchors(anchors: readonly number[], self: string): Promise<string | undefined> {
    const index = await this.#sketchIndex()
    let best: string | undefined
    let bestHits = 0
    for (const [id, hits] of index.candidatesOfKeys(anchors)) {
      const path = index.pathOf(id)
      if (path === undefined || path === self || this.#files.get(path)?.kind !== 'file' || hits <= bestHits) continue
      best = path
      bestHits = hits
    }
    return best
  }

  /** True when a probe key starts a fingerprint that a current file here holds. */
  #probeFinds(keys: Uint8Array): boolean {
    const prefixes: Uint8Array[] = []
    for (let o = 0; o < keys.length; o += PROBE_KEY_BYTES) prefixes.push(keys.subarray(o, o + PROBE_KEY_BYTES))
    for (const path of this.d.store.filesWithFingerprintPrefix(prefixes)) if (this.#files.known(path) !== undefined) return true
    return false
  }

  /**
   * A new small file that nothing here is likely to help build: at most WHOLE_WANT_CHUNKS chunks
   * long, with no file of its size here (a copy) nor of its name (the guess for a moved small
   * file). Its chunk list could find a seed only among files sharing one of its few chunks, and
   * a delta would then save at most a few KiB; the list, a `plan` and a round trip are spent on
   * every such file. It is asked for whole (`want.whole`), one round trip and one read on the
   * sender instead of two. On a first push of 20,000 files of 100 B–8 KiB, 69% qualified at one
   * chunk, all at four; in the bytes bench's "new small files" (2,000 of them), the lists and
   * plans of the other 31% were 62 KB and 36 KB of the 1.53 MB the class cost.
   *
   * Sizes and names are the tree's as the session found it, not with what it wrote since: a
   * list taken in as the session writes (§4.13) found a file of its size for nearly every later
   * one (the sizes of 200,000 small files are few), and a first push of 50,000 took 2.5× the
   * sender's CPU for chunk lists that found a copy for none.
   */
  #wantWhole(e: FileEntry): boolean {
    const oneChunk = this.d.params.kind === 'cdc' ? this.d.params.min : this.d.params.avg
    return e.size <= WHOLE_WANT_CHUNKS * oneChunk && !this.d.options.dryRun && !this.#files.walkHadFileOfSize(e.size) && !this.#filesByName().has(posix.basename(e.path))
  }

  /**
   * A new path worth a probe (#probed): over PROBE_ABOVE_BYTES (below, its list is as short),
   * and either up to WHOLE_KEPT_BYTES (a larger one's list is asked for anyway: it becomes its
   * record) or of a size some file here has (the probe's digest may make it a local copy).
   */
  #wantProbe(e: FileEntry): boolean {
    return e.size > PROBE_ABOVE_BYTES && (e.size <= WHOLE_KEPT_BYTES || e.size > WINDOWED_PROBE_BYTES || this.#files.hasFileOfSize(e.size))
  }

  /**
   * A large file changed where this side still has the version it last synced (size and mtime
   * as its base), or --force: it overwrites that version whatever its content, so neither its
   * digest nor a seed elsewhere is worth its chunk list (DIRECT_MIN_BYTES); a smaller one when its
   * size changed (SMALL_DIRECT_MAX_BYTES). Not with digests in the list (--checksum, two-way
   * sync), nor in a dry run (no exchange of data).
   */
  #wantDirect(e: FileEntry, cur: TreeEntry | undefined): boolean {
    if (cur?.kind !== 'file' || e.digest !== undefined || cur.size < REFINE_MIN_SEED_BYTES) return false
    const small = e.size >= REFINE_MIN_SEED_BYTES && e.size <= SMALL_DIRECT_MAX_BYTES && e.size !== cur.size
    if (e.size < DIRECT_MIN_BYTES && !small) return false
    if (this.d.options.dryRun || !speaksDirect(this.d)) return false
    // Under 64 MiB only from a sender of version 8: one of version 7 may end the delta with an
    // XXH3-128, which leaves the base no digest (a copy touched here since would then be taken
    // for one changed: a conflict copy); version 8 ends such a file with its SHA-256.
    if (e.size < WINDOWED_PROBE_BYTES && !peerChecksDirectFast(this.d)) return false
    const base = this.#baseOf(e.path)
    return this.d.options.force || isBase({ size: cur.size, mtimeMs: cur.mtimeMs }, base)
  }

  /** What this side last synced at `path`: the pushing replica's pair base when there is one
   *  (baseOf), else the tree's own. */
  #baseOf(path: string): SyncBase | undefined {
    return this.d.baseOf !== undefined ? this.d.baseOf(path) : this.d.store.getBase(path)
  }

  #newTransfer(entry: FileEntry, current: Transfer['current'], attempt: number): Transfer {
    return { id: this.#nextId++, entry, current, attempt, wanted: false, conflict: false, chunks: [], listed: 0, partialList: false, retried: false }
  }

  /** Asks for the file's chunk list once the want window has room. */
  #enqueue(t: Transfer): void {
    this.#transfers.set(t.id, t)
    this.#waiting.push(t)
    this.#pumpWants()
  }

  /**
   * Lets the sender list on (§4.13): up to the window past the entries taken in, those listed
   * but for the files still waiting to be asked for. Told once a quarter of a window has been
   * taken in since last time, so a list that needs nothing (a first sync of equal trees by
   * --checksum) costs a `listRoom` per ~2,000 entries, and the sender never waits on one while
   * this side still has a quarter of a window of its list to take in.
   */
  #roomForList(): void {
    if (this.#listWindow === undefined) return
    const upTo = this.#entriesListed - this.#waiting.length + this.#listWindow
    if (upTo - this.#listAllowed < this.#listWindow / 4) return
    this.#listAllowed = upTo
    this.#out.post({ t: 'listRoom', upTo })
  }

  #pumpWants(): void {
    const waited = this.#waiting.length
    while (this.#wanted < WANT_WINDOW && this.#waiting.length > 0) {
      const t = this.#waiting.shift()!
      t.wanted = true
      this.#wanted++
      this.#out.post({
        t: 'want', id: t.id, path: t.entry.path,
        ...(t.whole === true && { whole: true }),
        // The digest only when a file of its size is here (a copy): 32 bytes a new file otherwise.
        ...(t.probe === true && { probe: true, ...(this.#files.hasFileOfSize(t.entry.size) && { digest: true }) }),
        ...(t.direct === true && { direct: true }),
      })
      if (t.whole === true) this.#fetchWholeInTask(t)
      else if (t.direct === true) this.#fetchDirectInTask(t)
      // The file at this path is its first seed, read (chunked, when the store has no record
      // of it) as soon as the sender's list comes (#resolveLocally): read it while the sender
      // lists. 1 GiB overwritten in place, its base received whole the last time (a record by
      // digest alone): the two passes of ~2 s each ran one after the other. A task of the
      // session, which ends after it. Its outcome is not looked at here: #resolveLocally awaits
      // the same read (LocalFiles reads a path once), a file error was reported by onError, and
      // any other failure is the file's, not the session's: #resolveLocally meets it again
      // (a failed read is not kept, so it reads again) and says so for that file.
      else if (t.current !== undefined && t.probe !== true) {
        const path = t.entry.path
        this.#scope.spawn(() => this.#files.record(path).then(() => undefined, () => undefined))
      }
    }
    if (this.#waiting.length < waited) this.#roomForList()
  }

  /** The file is done (written, kept, failed or given up): its memory and window slot go.
   *  The session's end is looked at when the file's task ends (#decideInTask), after its
   *  result went out and any retry of it was queued. */
  #settle(t: Transfer): void {
    if (!this.#transfers.delete(t.id)) return
    this.#heldChunks -= Math.min(t.chunks.length, this.#heldChunks)
    t.chunks = []
    if (t.wanted) this.#wanted--
    this.#pumpWants()
  }

  /**
   * What the digest alone settles: same content (unchanged), a file only the receiver changed
   * (kept), identical content elsewhere in the tree (local copy). Marks a conflict for the
   * transfer. True when nothing needs to come over the wire. Its event carries the file's id
   * only once the sender knows it (wanted); a file settled from the list alone (--checksum)
   * reports with id 0, else the sender would not know which file the result is about.
   */
  async #resolveLocally(t: Transfer, digest: FileDigest): Promise<boolean> {
    const { entry: e, current: cur } = t
    const id = t.wanted ? t.id : 0
    // The file at the same path is read now if this session has not yet: it is the first seed.
    const mine = cur === undefined ? undefined : await this.#files.record(e.path)
    if (cur !== undefined && mine !== undefined) {
      if (mine.digest === digest) {
        await this.#sameContent(e, cur, digest, id)
        return true
      }
      const verdict = checkOverwrite({
        current: mine,
        incoming: { size: t.size ?? e.size, mtimeMs: e.mtimeMs, digest },
        base: this.#baseOf(e.path),
        force: this.d.options.force,
      })
      if (verdict === 'kept') {
        this.#event(
          {
            path: e.path,
            action: 'kept',
            code: 'CHANGED_ON_RECEIVER',
            message: `${e.path}: changed on the receiver since the last sync and not on the sender; kept the receiver's copy (pull to get it, or use --force)`,
          },
          id,
        )
        return true
      }
      t.conflict = verdict === 'conflict'
    }
    // A new path is most often a renamed, moved or copied file: find it by content. Only a
    // file of the same size can be a copy, so only those are read if the store has no record
    // of them (reading the whole tree for a 30 KiB new file was 424 files read of a 16 MiB
    // tree, a third of a two-way round's time: bench/two-way.ts).
    if (cur === undefined) await this.#files.indexSize(t.size ?? e.size)
    const copyOf = this.d.store.findByDigest(digest).find((p) => p !== e.path && this.#files.known(p) !== undefined)
    return copyOf !== undefined && (await this.#copyLocal(e, digest, copyOf, cur, t.conflict, id))
  }

  /**
   * Same content (by digest, or by size and mtime when `digest` is not known: the quick check,
   * which reads nothing): at most the mode and mtime need setting, and the base is recorded.
   */
  async #sameContent(e: FileEntry, cur: TreeEntry, digest: FileDigest | undefined, id = 0): Promise<void> {
    const sameTime = sameMtime(cur.mtimeMs, e.mtimeMs)
    if (!this.d.options.dryRun) {
      const base = { ...(digest !== undefined && { digest }), size: e.size, mtimeMs: e.mtimeMs }
      // Written only when it says something new: a no-op of 20,000 files wrote 20,000 bases
      // one transaction at a time (33 s) when compared to the nanosecond.
      const old = this.d.store.getBase(e.path)
      const known = old !== undefined && old.size === e.size && old.mtimeMs !== undefined && sameMtime(old.mtimeMs, e.mtimeMs) && (digest === undefined || old.digest === digest)
      if (!known) this.#files.track(this.d.store.setBase(e.path, base))
    }
    if (cur.mode === e.mode && sameTime) {
      // The same to the quick check but not to the millisecond (a time an older dsync set, ~1 µs
      // below the sender's): set again, quietly, so that its directory's summary matches (§4.9).
      // Best effort: a file this side may not touch (not its owner) is still unchanged.
      if (Math.floor(cur.mtimeMs) !== Math.floor(e.mtimeMs) && !this.d.options.dryRun) {
        await setMetadata(await this.#abs(e.path), { mtimeMs: e.mtimeMs }).catch(() => undefined)
      }
      return this.#event({ path: e.path, action: 'unchanged', size: e.size }, id)
    }
    if (!this.d.options.dryRun) {
      const abs = await this.#abs(e.path)
      await setMetadata(abs, { ...(cur.mode !== e.mode && { mode: e.mode }), ...(!sameTime && { mtimeMs: e.mtimeMs }) })
      // Its chunks only if they are of these bytes (a record of the walk's size and mtime may be
      // of other content, when the file changed keeping both).
      const known = digest === undefined ? undefined : this.#files.known(e.path)
      await this.#record(e.path, abs, digest, known?.digest === digest ? known : undefined)
    }
    this.#event({ path: e.path, action: 'meta', size: e.size }, id)
  }

  /** Identical content exists at `from` on this side: copy it, verified, no data on the wire.
   *  False when the source turned out not to match (changed since the scan): fetch instead. */
  async #copyLocal(e: FileEntry, digest: FileDigest, found: string, cur: TreeEntry | undefined, conflict: boolean, id: number): Promise<boolean> {
    const from = this.#whereNow(found)
    const event: FileEvent = { path: e.path, action: 'copy', seed: from, size: e.size, similarity: 1 }
    if (this.d.options.dryRun) {
      this.#event(event, id)
      return true
    }
    if (cur === undefined && !conflict && (await this.#movable(from)) && (await this.#moveLocal(e, digest, from, id))) return true
    const abs = await this.#abs(e.path)
    const src = await this.#abs(from)
    await this.#ensureParent(e.path, abs)
    const conflictCopy = conflict && cur ? await this.#keepConflictCopy(e.path, abs) : undefined
    try {
      await writeAtomically(
        abs,
        async (sink) => {
          const d = new FileDigester()
          for await (const buf of openFileSource(src, { signal: this.#signal, noFollow: true })) {
            d.update(buf)
            await sink.write(buf)
          }
          if (d.digest() !== digest) throw new DsyncError('DIGEST_MISMATCH', `${from}: changed while being copied`)
        },
        { mode: e.mode, mtimeMs: e.mtimeMs, signal: this.#signal, syncDir: false, sizeHint: e.size, replaces: cur !== undefined && conflictCopy === undefined },
      )
      this.#dirty.add(dirname(abs))
    } catch (err) {
      if (isDsyncError(err, 'DIGEST_MISMATCH') || isDsyncError(err, 'NOT_FOUND') || isDsyncError(err, 'UNSAFE_PATH') || isDsyncError(err, 'NOT_A_FILE')) return false
      throw err
    }
    await this.#record(e.path, abs, digest, this.d.store.get(from))
    this.#event({ ...event, ...(conflictCopy !== undefined && { action: 'conflict', conflictCopy }) }, id)
    return true
  }

  /**
   * Whether the file at `from`, whose content a new path needs, may be renamed there instead of
   * copied (PROTOCOL.md §4.14): only when --delete would remove it at the end anyway, so the
   * tree ends as a copy and a deletion would leave it. The whole list must have come (a path
   * not listed yet may be listed later), and the sender must take a `moved` result. A copy of
   * a 64 KiB file here was a read, a write and an fsync; renamed, it is a read (the check) and
   * a link and an unlink (bench/README.md).
   */
  async #movable(from: string): Promise<boolean> {
    const o = this.d.options
    if (!o.delete || o.dryRun || !senderTakesMoves(this.d) || !this.#listDone || this.#rulesChange) return false
    if (this.#senderLists(from) || this.#unread.has(from) || isUnder(from, this.#unread) || this.#seedsInUse.has(from)) return false
    const e = this.#files.get(from)
    return e?.kind === 'file' && (await keepReason(e, this.#files, this.d.store, o.force)) === undefined
  }

  /**
   * Renames `from` (#movable) to the new path `e`, after reading it to check that it holds
   * `digest` and did not change meanwhile. A link and an unlink, as a two-way move: a file made
   * at the new path meanwhile is never replaced. False when it cannot be done here (it changed,
   * the new path is taken, the file system has no hard links): the caller copies instead.
   */
  async #moveLocal(e: FileEntry, digest: FileDigest, from: string, id: number): Promise<boolean> {
    const abs = await this.#abs(e.path)
    const src = await this.#abs(from)
    await this.#ensureParent(e.path, abs)
    // One name (a hard link elsewhere would tie that file's future to this one's), owned by
    // this user (its mode and mtime are set as a copy's would be): else a copy.
    const uid = process.geteuid?.()
    const look = (): Stats | undefined => {
      const st = lstatSync(src)
      return st.nlink !== 1 || (uid !== undefined && uid !== 0 && st.uid !== uid) ? undefined : st
    }
    const refused = (err: unknown): boolean => {
      const code = (err as NodeJS.ErrnoException).code
      return code === 'ENOENT' || code === 'EEXIST' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'EMLINK'
    }
    let before: string | undefined
    /** the store's record of `from`, when current (LocalFiles.known) */
    let rec: FileRecord | undefined
    try {
      const st = look()
      if (st === undefined) return false
      before = statStamp(st)
      // The old file has the digest when the store's record of it says so and still holds (its
      // size and mtime as recorded, not racy: the quick check that finds any file unchanged;
      // with --checksum only a record read this session). Else it is read and hashed: the
      // renames class by hand, ~12.8 MB read and hashed by the receiver for 200 files.
      rec = this.#files.known(from)
      if (rec === undefined || rec.digest !== digest || rec.size !== st.size || rec.mtimeMs !== st.mtimeMs) {
        const d = new FileDigester()
        for await (const buf of openFileSource(src, { signal: this.#signal, noFollow: true })) d.update(buf)
        if (d.digest() !== digest) return false
      }
    } catch (err) {
      if ((isDsyncError(err) && err.code !== 'ABORTED') || refused(err)) return false // gone, or not a regular file now
      throw err
    }
    // The new path's record is the old one's (read above when current, not read again).
    const content = rec ?? this.d.store.get(from)
    // From the last checks to the unlink, synchronous calls: no seed read of `from` starts in
    // between (#fetch reads a renamed seed at its new path, and holds off a rename while it reads).
    try {
      const now = look()
      if (this.#seedsInUse.has(from) || now === undefined || statStamp(now) !== before) return false
      linkSync(src, abs)
    } catch (err) {
      if (refused(err)) return false
      throw err
    }
    try {
      unlinkSync(src)
    } catch {
      unlinkSync(abs) // two names for one file would tie their futures: back to one, then a copy
      return false
    }
    this.#movedTo.set(from, e.path)
    this.#files.delete(from)
    const was = lstatSync(abs)
    this.#files.set({ path: e.path, kind: 'file', size: was.size, mtimeMs: was.mtimeMs, mode: was.mode & 0o7777 })
    this.#dirty.add(dirname(src)).add(dirname(abs))
    if ((was.mode & 0o7777) !== e.mode || !sameMtime(was.mtimeMs, e.mtimeMs)) await setMetadata(abs, { mode: e.mode, mtimeMs: e.mtimeMs })
    await this.#record(e.path, abs, digest, content)
    this.#event({ path: e.path, action: 'moved', seed: from, size: e.size }, id)
    return true
  }

  /** A complete chunk list: settle the file locally if its digest allows, else pick the seed,
   *  decide, and fetch it (in a task: a local copy or a seed's signature must not stall the
   *  message pump). */
  #decideInTask(t: Transfer): void {
    const work = async (): Promise<void> => {
      try {
        if (await this.#resolveLocally(t, t.digest!)) return this.#settle(t)
      } catch (err) {
        this.#fail(t.entry.path, asFileError(err, t.entry.path, 'settle it'), t.id)
        return this.#settle(t)
      }
      return this.#decideAndFetch(t)
    }
    this.#inFetchSlot(work)
  }

  /** A file asked for whole: its queue is ready before the data can come (the sender streams
   *  it on the `want`), and it is written once a fetch slot frees. */
  #fetchWholeInTask(t: Transfer): void {
    t.queue = new ByteQueue(this.#signal)
    this.#inFetchSlot(() => this.#fetch(t, null, { path: t.entry.path, action: 'new', size: t.entry.size }))
  }

  /** A file planned at once against its old version (#wantDirect): a refined exchange whose
   *  matches measure it (a trial: below the threshold it comes as literals only, as whole). */
  #fetchDirectInTask(t: Transfer): void {
    const path = t.entry.path
    t.size = t.entry.size
    t.refinable = true
    this.#inFetchSlot(() => this.#fetch(t, path, { path, action: 'delta', size: t.entry.size, seed: path, similarity: 0 }, 0, true))
  }

  /** Runs a file's work in a task once a fetch slot frees (alone once the disk was found full);
   *  the session's end is looked at when it ends. */
  #inFetchSlot(work: () => Promise<void>): void {
    this.#scope.spawn(
      () => this.#fetchSlots.with(() => (this.#diskFull ? this.#alone.with(work) : work())),
      () => this.#maybeFinish(),
    )
  }

  async #decideAndFetch(t: Transfer): Promise<void> {
    const id = t.id
    const chunks = t.chunks
    const recs: FileRecord[] = []
    const add = (rec: FileRecord | undefined): void => {
      if (rec !== undefined && !recs.some((r) => r.path === rec.path)) recs.push(rec)
    }
    // Target and seeds are measured on the same view: a sampled target against the same sample
    // of each seed, and when a seed's record is itself a sample (a large file received), the
    // target's sample against it. Sampling a sample gives it back.
    let target = profile(chunks)
    let cands: SeedCandidate[] = []
    let sampledView = false
    // Each seed's profile is made once per view (choose runs twice when the first pass finds
    // no delta; a full list of a 1 GiB seed is 131,072 chunks).
    const seedViews = new Map<string, SeedCandidate>()
    const measure = (): void => {
      const was = sampledView
      sampledView = t.partialList || recs.some((r) => r.sampled === true)
      if (was !== sampledView) seedViews.clear()
      target = profile(sampledView && !t.partialList ? sampleChunks(chunks) : chunks)
      cands = recs.map((r) => {
        let c = seedViews.get(r.path)
        if (c === undefined) seedViews.set(r.path, (c = { path: r.path, profile: profile(sampledView && r.sampled !== true ? sampleChunks(r.chunks) : r.chunks) }))
        return c
      })
    }
    // A candidate already weighed is not looked up again (fromIndex runs twice or three times:
    // each lookup decodes its record, ~5 µs for a small file).
    const fromIndex = (): void => {
      for (const c of this.d.store.candidates(chunks, { limit: MAX_CANDIDATES })) if (!recs.some((r) => r.path === c.path)) add(this.#files.known(c.path))
    }
    const same = t.current === undefined ? undefined : await this.#files.record(t.entry.path)
    add(same)
    if (t.sketchSeed !== undefined) add(await this.#files.record(t.sketchSeed))
    // The index as it stands first (current for every file read before); the rest of the tree
    // is read only when the file at the same path is not seed enough.
    fromIndex()
    let samePath = same?.path
    /** what samePath is when it is not the file's own earlier version: a guess by name */
    let samePathIs: string | undefined
    const choose = () => {
      measure()
      return decide(target, cands, this.#metric, this.d.options.threshold, { samePath, samePathIs })
    }
    let decision = choose()
    if (decision.method !== 'delta') {
      // A file too small to measure is decided by its earlier version alone (same path, or
      // same name: below), so the index of the whole tree could not give it a seed.
      // Only files that could be its seed are read: from smallestSeedBytes up. Once one passes,
      // the rest are too, for a second seed (which may be small: it only adds what the first
      // lacks). A new file with no seed here no longer reads every small file of the tree.
      const floor = smallestSeedBytes(t.size ?? t.entry.size, this.d.options.threshold)
      const measurable = chunks.length >= MIN_MEASURABLE_CHUNKS
      if (measurable) await this.#files.indexFrom(floor)
      fromIndex()
      decision = choose()
      // The file this one most likely was: the same path, or else — for a small file that no
      // file here shares enough chunks with (an edit changes most of a small file's few chunks)
      // — a guess by name (name-guess.ts), read if not known. Not only when the index found no
      // file at all: one sharing a chunk or two below the threshold kept 60 of bench/sync.ts
      // "rename + edit"'s 100 moved files from their old versions, and its 100 renamed files had
      // no guess. By hand, 1c960d7 against this: 48 → 200 deltas, 1.04 MiB → 232 KiB on the wire
      // (rsync -az: 1.31 MB); 8 pushes each in turns, 971–1,139 ms (median 1,055) → 871–1,101
      // (median 942).
      if (decision.method !== 'delta' && samePath === undefined && !measurable) {
        const guess = this.#guessByName(t.entry)
        if (guess !== undefined) {
          t.nameGuess = samePath = guess.path
          samePathIs = guess.renamed ? 'a file of a similar name in its folder (renamed?)' : 'a file of the same name (moved?)'
          add(await this.#files.record(samePath))
          decision = choose()
        }
      }
      if (decision.method === 'delta' && floor > 0 && measurable) {
        await this.#files.indexAll()
        fromIndex()
        decision = choose()
      }
    }
    // Chunk lists cannot see edits smaller than a chunk: a file with a few scattered line
    // edits shares few whole 8 KiB chunks with its old version and measured "not similar"
    // (issue 10: 8 of 50 edited source files went whole). Before sending it whole, it is
    // measured again on the bytes: by the matches of a refined exchange with the seed, which a
    // delta would run anyway (the threshold is applied when the rounds end: #refinedPlan), or
    // where there is none, by sketches of short windows (within ~3 points of the truth). The
    // sketches cost 28.9 KB of the 123 KB the bench's 50 edited source files took; the
    // exchange costs nothing more when the file goes as a delta.
    // A file made of pieces of several files: a second seed when it supplies enough of what the
    // first does not, and either the first passed the rule alone or the pair does (issue 10,
    // "deltas from several seeds"; a file too small to measure keeps its earlier version alone).
    let also: SecondSeed | undefined
    if (decision.seed !== null && decision.note === undefined) {
      const pair = secondSeed(target, cands, decision.seed, this.#metric)
      if (pair !== undefined && (decision.method === 'delta' || passesThreshold(pair.similarity, this.d.options.threshold))) {
        also = pair
        if (decision.method !== 'delta') decision = { method: 'delta', seed: decision.seed, similarity: pair.similarity }
      }
    }
    // A seed found by sketch shares no whole chunk, maybe: it is measured on the bytes below.
    const seed = decision.seed ?? samePath ?? t.sketchSeed
    let trial = false
    const borderline = decision.method !== 'delta' && seed !== undefined && seed !== null && !t.partialList && (t.size ?? 0) >= SKETCH_MIN_FILE_BYTES
    if (borderline && this.#refines(t, seed, this.#files.get(this.#whereNow(seed))?.size ?? 0) && !this.d.options.dryRun) {
      trial = true
      decision = { method: 'delta', seed, similarity: decision.similarity }
    } else if (borderline && t.sketchable === true) {
      const measured = await this.#sketchSimilarity(t, seed)
      if (measured !== undefined) {
        const note = `measured by sketch, ±${(measured.errorBound * 100).toFixed(1)} points`
        decision = passesThreshold(measured.value, this.d.options.threshold)
          ? { method: 'delta', seed, similarity: measured.value, note }
          : { method: 'whole', seed, similarity: measured.value, note }
      }
    }
    const action: Action = decision.method === 'delta' ? 'delta' : t.current ? 'whole' : 'new'
    const shown = rankSeeds(target, cands, this.#metric, MAX_SHOWN_CANDIDATES)
    const event: FileEvent = {
      path: t.entry.path,
      action,
      size: t.size ?? t.entry.size,
      ...(decision.seed !== null && { seed: decision.seed, similarity: decision.similarity }),
      ...(decision.note !== undefined && { message: decision.note }),
      ...(also !== undefined && { message: `and ${also.path} as a second seed (${(also.adds * 100).toFixed(0)}% more of the file)` }),
      ...(shown.length > 0 && { candidates: shown }),
    }
    if (this.d.options.dryRun) {
      this.#event(event, id)
      return this.#settle(t)
    }
    const firstProfile = cands.find((c) => c.path === decision.seed)?.profile
    const secondProfile = cands.find((c) => c.path === also?.path)?.profile
    const seedProfile = firstProfile && secondProfile ? profile([...firstProfile.chunks, ...secondProfile.chunks]) : firstProfile
    // A sampled list holds a fraction of the file's bytes: scale what it shows to the whole.
    const scale = sampledView && target.multiset.total > 0 ? (t.size ?? t.entry.size) / target.multiset.total : 1
    const regions = decision.method === 'delta' && seedProfile ? changedRegions(target, seedProfile, scale) : 0
    return this.#fetch(t, decision.method === 'delta' ? decision.seed : null, event, regions, trial, also?.path)
  }

  /**
   * True when a delta of `t` from `seed` (with `seedBytes` in all its seeds) runs refinement
   * rounds (#fetch). From a guess by name (#decideAndFetch) only from SKETCH_MIN_FILE_BYTES up:
   * below, the rounds save little of what such a delta sends and cost round trips.
   * bench/sync.ts "rename + edit" (~108 deltas from 20 KiB seeds, most guessed), 5 pushes each
   * in turns: with rounds 712 KiB, 1,070–1,283 ms (median 1,161); without, 737 KiB,
   * 1,028–1,161 ms (median 1,044). bench/bytes.ts "rename + edit" (30 files of 64 KiB): 53,903 B
   * with rounds from 64 KiB, 56,037 B with none for a guess.
   */
  #refines(t: Transfer, seed: string, seedBytes: number): boolean {
    return t.refinable === true && !t.retried && seedBytes >= (seed === t.nameGuess ? SKETCH_MIN_FILE_BYTES : REFINE_MIN_SEED_BYTES)
  }

  /**
   * The file's similarity to `seed` by sketches: the sender's sketch of its file (asked for)
   * against this side's sketch of the seed (read again). Undefined when the sender has none.
   */
  async #sketchSimilarity(t: Transfer, seed: string): Promise<{ value: number; errorBound: number } | undefined> {
    const signal = this.#signal
    t.sketch = new Mailbox(signal, 'sketch')
    this.#out.post({ t: 'sketchWant', id: t.id })
    // The seed's sketch while the sender makes its own.
    // With its exact windows when the sender's sketch has them (format 2); an older sender's
    // format 1 is compared by Gear's identities, which any sketch has.
    // Read where it is now, and not renamed while it is read.
    const at = this.#whereNow(seed)
    const own = await this.#readingSeeds([at], async () =>
      sketchStream(openFileSource(await this.#abs(at), { signal, noFollow: true }), { windows: peerReadsWindows(this.d) }),
    )
    const raw = await t.sketch.next()
    if (raw === null) return undefined
    let target
    try {
      target = decodeSketch(raw)
    } catch (err) {
      throw new DsyncError('BAD_MESSAGE', `the sketch of ${t.entry.path} is malformed: ${(err as Error).message}`, { cause: err })
    }
    const est = estimateSimilarity(target, own)
    const value = this.d.options.metric === 'containment' ? est.containmentAinB : est[this.d.options.metric as 'jaccard' | 'dice' | 'lcs']
    return { value, errorBound: est.errorBound }
  }

  /**
   * The local file `e` most likely was, by name (name-guess.ts), among files the sender does not
   * list (one it still has under its name was neither moved nor renamed: a new README.md is not
   * the README.md of another folder): one of the same name elsewhere, nearest in size (moved);
   * else one of a similar name in its folder (renamed). As the session
   * found the tree (#filesByName), by the sizes the walk saw: no record is looked up but the
   * guess's (a lookup and decoding for each file weighed cost ~2.5 ms a guess in a folder of 200).
   * No rename is guessed once the session has weighed MAX_RENAME_NAMES_WEIGHED names.
   */
  #guessByName(e: FileEntry): { path: string; renamed: boolean } | undefined {
    const name = posix.basename(e.path)
    const sameName: NamedFile[] = []
    for (const path of this.#filesByName().get(name) ?? []) {
      const w = path === e.path || this.#senderLists(path) ? undefined : this.#files.walked.get(path)
      if (w?.kind === 'file') sameName.push({ path, size: w.size })
    }
    const moved = nearestInSize(e.size, sameName)
    if (moved !== undefined) return { path: moved.path, renamed: false }
    const sources = this.#renameSources(parentDir(e.path))
    if (this.#renameNamesWeighed + sources.length > MAX_RENAME_NAMES_WEIGHED) return undefined
    this.#renameNamesWeighed += sources.length
    const renamed = similarlyNamed(name, e.size, sources)
    return renamed === undefined ? undefined : { path: renamed.path, renamed: true }
  }

  /**
   * The files of folder `dir` a rename may have come from: those the sender did not list (a
   * file it still has under its name was not renamed, as rsync's --fuzzy skips a file it
   * sends), the first MAX_RENAME_SOURCES in name order. Taken once a session per folder, when
   * first asked: its listing is whole by then unless it is longer than a message holds, and a
   * file listed later is only a guess less likely right.
   */
  #renameSources(dir: string): readonly NamedFile[] {
    let files = this.#renameSourcesIn.get(dir)
    if (files === undefined) {
      files = []
      for (const s of this.#files.walked.children(dir)) {
        if (files.length === MAX_RENAME_SOURCES) break
        if (s.kind === 'file' && !this.#senderLists(s.path)) files.push({ path: s.path, size: s.size })
      }
      this.#renameSourcesIn.set(dir, files)
    }
    return files
  }

  /** True when the sender listed `path` so far, alone or in a folder its summary stood for. */
  #senderLists(path: string): boolean {
    return this.#seen.has(path) || isUnder(path, this.#impliedDirs)
  }

  /** Sends the plan for one file and rebuilds it from the data that comes back: whole, or a
   *  delta from `seed` (and `also`, a second seed: the two files' bytes one after the other).
   *  A seed this session renamed (#moveLocal) is read where it went; one being read is not
   *  renamed until this file is done. */
  async #fetch(t: Transfer, seed: string | null, event: FileEvent, regions = 0, trial = false, also?: string): Promise<void> {
    const seedNow = seed === null ? null : this.#whereNow(seed)
    const alsoNow = also === undefined ? undefined : this.#whereNow(also)
    const seeds = [seedNow, alsoNow].filter((p): p is string => p != null)
    const named = seedNow !== seed && event.seed === seed ? { ...event, seed: seedNow! } : event
    return this.#readingSeeds(seeds, () => this.#fetchFrom(t, seedNow, named, regions, trial, alsoNow))
  }

  /** Where the file at `path` is now: its new path when this session renamed it (#moveLocal). */
  #whereNow(path: string): string {
    return this.#movedTo.get(path) ?? path
  }

  /** Runs `fn`, which reads `paths` as seeds: none of them is renamed away meanwhile (#movable). */
  async #readingSeeds<T>(paths: readonly string[], fn: () => Promise<T>): Promise<T> {
    for (const p of paths) this.#seedsInUse.set(p, (this.#seedsInUse.get(p) ?? 0) + 1)
    try {
      return await fn()
    } finally {
      for (const p of paths) {
        const n = this.#seedsInUse.get(p)! - 1
        if (n === 0) this.#seedsInUse.delete(p)
        else this.#seedsInUse.set(p, n)
      }
    }
  }

  async #fetchFrom(t: Transfer, seed: string | null, event: FileEvent, regions: number, trial: boolean, also?: string): Promise<void> {
    const path = t.entry.path
    const signal = this.#signal
    let tee: ByteQueue | undefined
    try {
      const abs = await this.#abs(path)
      await this.#ensureParent(path, abs)
      if (this.#diskFull || (t.size ?? 0) >= ROOM_CHECK_BYTES) await this.#checkRoom(path, abs, t.size ?? 0)
      const seeds = seed === null ? null : also === undefined ? [seed] : [seed, also]
      const seedAbs = seeds === null ? null : await Promise.all(seeds.map((s) => this.#abs(s)))
      // Blocks sized for the change the chunk lists show: few regions changed, big blocks and a
      // small signature; many scattered edits, small blocks and little literal.
      const sizes = seeds === null ? [] : seeds.map((s) => this.#files.get(s)?.size ?? 0)
      const size = sizes.reduce((a, n) => a + n, 0)
      const blockSize = blockSizeForChange(size, regions)
      // A small seed is read once, here: its signature, the rounds and the rebuild read this copy.
      const held = seedAbs !== null && size <= HELD_SEED_BYTES ? await readSeedsWhole(seedAbs, sizes, { noFollow: true }) : undefined
      // A file asked for whole has had its queue since its `want`, and gets no plan: the
      // sender streams it as the want said.
      if (t.whole !== true) {
        t.queue = new ByteQueue(signal)
        t.dataSeen = false
        t.bundled = false
        t.dataEnded = false
        t.cancelled = false
        t.identical = false
        // A trial was decided on a refined exchange (#decideAndFetch): it runs one whatever
        // the seed became since, or the threshold would never be applied to it.
        if (seedAbs !== null && (trial || this.#refines(t, seed!, size))) {
          event = await this.#refinedPlan(t, seed!, seedAbs, held, size, regions, event, trial)
        } else {
          const signature =
            seedAbs === null
              ? null
              : encodeSignature(await computeSignature(seedSource(seedAbs, held, signal), { size, blockSize, signal }))
          // After a probe that found nothing, a whole plan is a `wholeWant` (19 bytes, not 54).
          this.#out.post(seed === null && wholeAfterProbe(t)
            ? { t: 'wholeWant', id: t.id }
            : { t: 'plan', id: t.id, method: seed === null ? 'whole' : 'delta', seed, similarity: event.similarity ?? 0, signature })
        }
      }
      let delta: AsyncIterable<Uint8Array> = t.queue!
      if (t.identical === true) {
        const kept = await this.#keptAsIs(t, abs)
        if (kept === true) return
        delta = kept
      }
      const conflictCopy = t.conflict && t.current ? await this.#keepConflictCopy(path, abs) : undefined
      // The sender's list describes the file written: whole, or a sample (a large file: seeds,
      // similarity and the index only ever use its sample, so that is its record). A list cut
      // short by the memory budget is not: that file is chunked as it is written (its record,
      // for the next sync: a 1 GiB file changed after a sync was read twice, for the record and
      // the signature). Keeping the sample spared the receiver 0.4 of its ~1.5 CPU s a new
      // 256 MiB file cost it (chunking and fingerprinting every byte again).
      const keepsSample = t.sampled === true && t.listed === t.chunks.length
      tee = t.partialList && !keepsSample ? new ByteQueue(signal) : undefined
      const chunking = tee === undefined ? undefined : chunkList(tee, this.#cutter(), { signal })
      chunking?.catch(() => undefined) // awaited below; a failed write ends it first
      // A file asked for whole, or sent whole after its probe, came with no list: it is small
      // (#probed), and chunked in memory from the bytes written (a streaming chunker per file
      // cost 8 of the receiver's 44 CPU s on 20,000 such files). One that grew on the sender
      // past WHOLE_KEPT_BYTES since, or a large one probed by windows, is read when first
      // needed as a seed.
      const written: Uint8Array[] | undefined = cameWithoutList(t) && (t.size ?? t.entry.size) <= WHOLE_KEPT_BYTES ? [] : undefined
      let writtenBytes = 0
      let onWrite: ((b: Uint8Array) => Promise<void> | void) | undefined
      if (tee !== undefined) {
        onWrite = (b) => tee!.push(b.slice())
      } else if (written !== undefined) {
        onWrite = (b) => {
          writtenBytes += b.length
          if (writtenBytes <= WHOLE_KEPT_BYTES) written.push(b.slice())
        }
      }
      const res = await patchFile(held !== undefined ? memorySeedReader(held) : seedAbs, delta, abs, {
        ownedDelta: true, // message bytes: a view of a frame received, never reused
        mode: t.entry.mode,
        mtimeMs: t.entry.mtimeMs,
        signal,
        syncDir: false,
        noFollow: true,
        // A file asked for whole has no list, so no digest yet; it must still be the size it was
        // listed with, or a peer could stream without end (one that grew since asks again).
        expect: t.digest !== undefined ? { size: t.size!, digest: t.digest } : { size: t.size ?? t.entry.size },
        sizeHint: t.size ?? t.entry.size,
        replaces: t.current !== undefined && conflictCopy === undefined,
        ...(onWrite !== undefined && { onWrite }),
      })
      tee?.end()
      this.#dirty.add(dirname(abs))
      if (res.digest === undefined) {
        // Checked with XXH3-128 (§4.11): no SHA-256 to file it by, so no record either.
        await this.#record(path, abs, null, undefined)
      } else {
        const content: ChunkList | undefined = cameWithoutList(t)
          ? (written !== undefined && writtenBytes <= WHOLE_KEPT_BYTES ? { chunks: chunkBytes(written.length === 1 ? written[0]! : Buffer.concat(written), this.#cutter(), res.digest) } : undefined)
          : chunking !== undefined ? { chunks: await chunking } : { chunks: t.chunks, sampled: keepsSample }
        await this.#record(path, abs, res.digest, content)
      }
      // A sender that predates `refine.whole` sends its delta all the same: say what came.
      const action: Action | undefined = res.copiedBytes > 0 && event.action !== 'delta' ? 'delta' : undefined
      this.#event({ ...event, ...(action !== undefined && { action }), copiedBytes: res.copiedBytes, literalBytes: res.literalBytes, ...(conflictCopy !== undefined && { action: 'conflict', conflictCopy }) }, t.id)
      this.#settle(t)
    } catch (err) {
      t.queue?.close()
      tee?.close()
      // Sent with no list and not a byte came: the sender could not read it, and said why in a
      // `notice` (as a chunk list without a digest says it); planned at once, its exchange ended so.
      // (A direct file asked for again whole, after a delta that did not match, is not: the
      // sender reports that failure as any listed file's.)
      if (t.askListed === true && !signal.aborted) {
        // Its exchange given up (#rounds): asked for again, with its list, before this one lets go.
        this.#enqueue(this.#newTransfer(t.entry, t.current, t.attempt))
        return this.#settle(t)
      }
      const sentNothing = cameWithoutList(t) && t.dataSeen !== true && (t.direct !== true || (senderGaveUp(t) && !t.retried))
      if (sentNothing && !signal.aborted && !isNoSpace(err)) return this.#settle(t)
      if (isDsyncError(err, 'DIGEST_MISMATCH') && seed !== null && !t.retried && !signal.aborted) {
        // A weak-sum false match, or the seed changed under us: the whole file always works.
        t.retried = true
        return this.#fetch(t, null, { ...event, action: t.current ? 'whole' : 'new' })
      }
      // A retry is queued before this file lets go of its slot, so the session cannot look
      // finished in between.
      // Changed on the sender while it was read: its bytes said so, or the sender did (a notice).
      const changedThere = sourceChanged(err, seed) || t.changedOnSender === true
      if (isNoSpace(err) && !t.retriedForSpace && !signal.aborted) {
        // From now on one file at a time, each after a check of its room: this one again,
        // after the files already queued (some of which may fit).
        this.#diskFull = true
        this.#enqueue({ ...this.#newTransfer(t.entry, t.current, t.attempt), retriedForSpace: true })
      } else if (changedThere && t.attempt < MAX_SOURCE_ATTEMPTS && !signal.aborted) {
        // Ask again: the sender reads it afresh.
        this.#enqueue(this.#newTransfer(t.entry, t.current, t.attempt + 1))
      } else {
        const e = changedThere
          ? new DsyncError('SOURCE_CHANGED', `${path}: changed on the sender each of the ${t.attempt} times it was sent; not written (run again once it is stable)`, { path })
          : asFileError(err, path, 'write it')
        this.#fail(path, e, t.id)
      }
      this.#settle(t)
    }
  }

  /**
   * The rounds of a refined exchange (PROTOCOL.md §4.1): round 1's signature with blocks sized
   * for the changes the chunk lists show, then, for each match list back, a signature of small
   * blocks over just the seed ranges around its holes, until planRefinement sees nothing left
   * worth a round (or after MAX_REFINE_ROUNDS); then the sender's delta, which copies every
   * match. An edit then costs about its own size instead of a block (bench/README "Bytes").
   * On `trial` (the chunk lists put the seed below the threshold) the last match list measures
   * the file (matchedSimilarity), and below the threshold the sender is told to send it as
   * literals only, as a whole file. Returns the file's event as it then stands.
   */
  async #refinedPlan(t: Transfer, seedPath: string, seedAbs: readonly string[], held: Uint8Array | undefined, size: number, regions: number, event: FileEvent, trial: boolean): Promise<FileEvent> {
    const signal = this.#signal
    // With no chunk lists (want.direct) nothing says how many regions changed.
    const b1 = t.direct === true ? blockSizeForUnknownChange(size) : blockSizeForRefinement(size, Math.max(1, regions))
    const sig = await computeSignature(seedSource(seedAbs, held, signal), { size, blockSize: b1, signal })
    // The seed changed here since the walk (a local process writes it): the sender's match list
    // would be for another seed size, which is the sender's error; this is this side's file.
    // Asked for again with its list, it then meets the conflict check as any other.
    if (sig.seedSize !== size) {
      throw new DsyncError('SOURCE_CHANGED', `${t.entry.path}: its seed changed on this side while it was read (${sig.seedSize} bytes, ${size} when listed)`, { path: t.entry.path })
    }
    const signature = encodeSignature(sig)
    t.matches = new Mailbox(signal, 'match list')
    const seed = held !== undefined ? memorySeedReader(held) : await openSeedsReader(seedAbs, { noFollow: true, syncSmall: true })
    try {
      const ends = senderEndsRounds(this.d)
      this.#out.post({ t: 'plan', id: t.id, method: 'delta', seed: seedPath, similarity: event.similarity ?? 0, signature, refine: true, ...(ends && { ends }) })
      try {
        return await this.#rounds(t, t.matches, seed, size, b1, event, trial, ends)
      } catch (err) {
        // Given up here (it changed on the sender, or this side failed): the sender's side of
        // the exchange ends too, or its worker would wait for a round that never comes. An
        // older sender takes a nil signature instead; its delta is dropped (the file is settled).
        if (t.dataEnded !== true && !signal.aborted) {
          t.cancelled = true
          this.#out.post({ t: 'refine', id: t.id, signature: null, ...(speaksDirect(this.d) && { cancel: true }) })
        }
        throw err
      }
    } finally {
      await seed.close()
    }
  }

  /** #refinedPlan's rounds, from round 1's match list to the last `refine`. */
  async #rounds(t: Transfer, matches: Mailbox<Uint8Array>, seed: SeedReader, size: number, b1: number, event: FileEvent, trial: boolean, ends: boolean): Promise<FileEvent> {
    let prevBlock = b1
    for (let round = 0; ; round++) {
      const raw = await matches.next()
      let list
      try {
        list = decodeMatches(raw)
      } catch (err) {
        throw new DsyncError('BAD_MESSAGE', `match list for ${t.entry.path}: ${(err as Error).message}`, { cause: err })
      }
      // Another size than its list's (or, planned with no list, the walk's): the file changed
      // on the sender since, and is asked for again.
      if (list.seedSize === size && list.targetSize !== t.size) {
        throw new DsyncError('SOURCE_CHANGED', `${t.entry.path}: ${list.targetSize} bytes on the sender, listed with ${t.size}: it changed since it was listed`, { path: t.entry.path })
      }
      if (list.seedSize !== size || list.targetSize !== t.size) {
        throw new DsyncError('BAD_MESSAGE', `match list for ${t.entry.path} is for a ${list.seedSize}-byte seed and a ${list.targetSize}-byte file, not ${size} and ${t.size}`)
      }
      const plan = nextRefinement(list, prevBlock, round, t.direct === true)
      if (plan === null) {
        // Measured on the matches (a trial), a file below the threshold comes as literals only.
        const { similarity: measured, passes } = matchesPass(list, this.d.options.metric, this.d.options.threshold)
        const whole = trial && !passes
        if (whole && t.direct === true && t.entry.size < WINDOWED_PROBE_BYTES) {
          // Not like its old version: planned direct, it would come whole, though it may be a
          // copy of a file here or like another one. Asked for again with its list, it is decided
          // as any listed file (a local copy, another seed, or whole after all): a 20 MiB file
          // replaced by a copy of another went whole, 21 MB, where its list found the copy
          // (8.6 KB). From 64 MiB the list would cost the sender a whole read: such a file comes
          // whole, as a rewritten file does from rsync.
          t.askListed = true
          throw new DsyncError('ABORTED', `${t.entry.path}: not like its old version; asked for again with its list`, { path: t.entry.path })
        }
        // A sender that ends the rounds itself (`ends`) has sent its delta after a list that
        // passes; any other waits to be told.
        if (!ends || !passes) this.#out.post({ t: 'refine', id: t.id, signature: null, ...(whole && { whole: true }) })
        if (!trial) return event
        t.identical = t.direct === true && !whole && isIdentity(list)
        return {
          ...event,
          similarity: measured,
          message: 'measured by matching',
          ...(whole && { action: t.current ? 'whole' : 'new' }),
        }
      }
      const sig = encodeRefineSignature(await computeRefineSignature(seed, list, plan, { signal: this.#signal }))
      this.#out.post({ t: 'refine', id: t.id, signature: sig })
      prevBlock = plan.blockSize
    }
  }

  /**
   * A direct file whose rounds matched all of it in place: most likely only touched on the
   * sender. Its delta is then one copy of the whole seed, ending with the file's check (SHA-256,
   * or XXH3-128 from a sender of version 6 on: §4.12), and this side's file is hashed and checked
   * against it instead of written again: the same check, with
   * a read where the rebuild reads, writes and syncs 1 GiB (~0.8 s against ~2 s here). Equal, the
   * file keeps its bytes and takes the sender's mtime and mode (`meta`), and true is returned;
   * not equal (a false match of the rounds), DIGEST_MISMATCH, and #fetch asks for it whole. Any
   * other delta is returned to be applied as usual, the bytes read of it first.
   */
  async #keptAsIs(t: Transfer, abs: string): Promise<true | AsyncIterable<Uint8Array>> {
    const it = t.queue![Symbol.asyncIterator]()
    const head: Uint8Array[] = []
    let bytes = 0
    let ended = false
    while (bytes <= IDENTITY_DELTA_MAX_BYTES) {
      const r = await it.next()
      if (r.done === true) {
        ended = true
        break
      }
      head.push(r.value)
      bytes += r.value.length
    }
    const digest = ended ? identityDigest(Buffer.concat(head)) : undefined
    if (digest === undefined) {
      return (async function* () {
        yield* head
        for (let r = await it.next(); r.done !== true; r = await it.next()) yield r.value
      })()
    }
    // The file must be the one the walk found, and stay so while it is hashed: one rewritten
    // meanwhile would be stamped with the sender's time and then pass every quick check. Unchanged
    // while read and the walk's size and mtime after, it was the walk's before too.
    const mismatch = (): DsyncError => new DsyncError('DIGEST_MISMATCH', `${t.entry.path}: matched whole in place, yet not the sender's file: asked for whole`)
    const cur = t.current!
    // Hashed as the delta checks: SHA-256, or XXH3-128 (§4.11), which is then not filed.
    const h = await targetHasher(isFastCheck(digest))
    try {
      for await (const b of unchangedWhileRead(openFileSource(abs, { signal: this.#signal, noFollow: true }), abs, t.entry.path)) h.update(b)
    } catch (err) {
      throw isDsyncError(err, 'SOURCE_CHANGED') ? mismatch() : err
    }
    const st = await lstat(abs)
    if (!sameCheck(h.digest(), digest) || st.size !== cur.size || !sameMtime(st.mtimeMs, cur.mtimeMs)) throw mismatch()
    try {
      // Its time (and mode) first: a file this side may replace but not touch (another user's,
      // in a shared directory) is then written as any other, which needs only the directory.
      await setMetadata(abs, { ...(cur.mode !== t.entry.mode && { mode: t.entry.mode }), mtimeMs: t.entry.mtimeMs })
    } catch (err) {
      const code = ((isDsyncError(err) ? err.cause : err) as NodeJS.ErrnoException | undefined)?.code
      if (code === 'EPERM' || code === 'EACCES') return (async function* () { yield* head })()
      throw err
    }
    // An XXH3-128 is not filed: the base keeps the SHA-256 it had, if any, when its size and
    // mtime are the file's (it read unchanged since: the same bytes). Under --force the file may
    // not be its base: then no digest.
    const base = this.#baseOf(t.entry.path)
    const kept = isFastCheck(digest) ? (isBase({ size: cur.size, mtimeMs: cur.mtimeMs }, base) ? base?.digest : undefined) : digest
    await this.#sameContent(t.entry, cur, kept, t.id)
    this.#settle(t)
    return true
  }

  /** Refuses (IO, before a byte of the file is asked for) a file that cannot fit: its temp
   *  file needs `size` bytes in the directory's file system while the old one still exists. */
  async #checkRoom(path: string, abs: string, size: number): Promise<void> {
    let free: number
    try {
      const fsInfo = await statfs(dirname(abs))
      free = fsInfo.bavail * fsInfo.bsize
    } catch (err) {
      throw fsError(err, path, 'check the free space for it')
    }
    if (free < size + ROOM_MARGIN_BYTES) {
      throw new DsyncError('IO', `${path}: not enough free space on the receiver (needs ${size} bytes, ${free} free); not sent. Free some space and run again`, { path })
    }
  }

  /**
   * Before overwriting a file both sides changed: keep the receiver's version beside it. A hard
   * link to the current inode, which the rename of the new version then leaves in place: no
   * byte copied, and link() never follows a symlink. Where links are not supported, a copy.
   */
  async #keepConflictCopy(path: string, abs: string): Promise<string> {
    const copyPath = conflictCopyPath(path, this.d.now())
    const copyAbs = await this.#abs(copyPath)
    try {
      await link(abs, copyAbs)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'EMLINK') throw fsError(err, copyPath, 'keep a conflict copy')
      const st = await lstat(abs)
      await writeAtomically(copyAbs, async (sink) => {
        for await (const buf of openFileSource(abs, { signal: this.#signal, noFollow: true })) await sink.write(buf)
      }, { mode: st.mode & 0o7777, mtimeMs: st.mtimeMs, signal: this.#signal, syncDir: false })
    }
    this.#dirty.add(dirname(copyAbs))
    return copyPath
  }

  /**
   * Stores what this side now has at `path`: the sync base (digest when known, size, mtime),
   * and the record when its whole chunk list is at hand (a written file is chunked as it is
   * written: #fetch). Without one, the file is not read again to chunk it: it is read when it
   * is first needed as a seed (LocalFiles.record / indexAll). A 1 GiB new file was read three
   * times on the receiver (written, verified, chunked); now once. `digest` undefined: the base
   * was recorded from the quick check; null: written and checked with XXH3-128 (§4.11), so
   * the base is size and mtime alone, as after a quick check, and the file is hashed with
   * SHA-256 when first needed. A check a peer could forge is never filed as a digest: a copy
   * found by digest must have the content the digest names.
   */
  async #record(path: string, abs: string, digest: FileDigest | null | undefined, content: ChunkList | undefined): Promise<void> {
    // Synchronous: the inode was just written, so the call is served from memory, and a trip
    // through the thread pool per file cost more than the call (as the small files' writes do:
    // atomic-write.ts SYNC_WRITE_BYTES). Push of 20,000 new small files: see bench/README.
    const st = lstatSync(abs)
    const entry: TreeEntry = { path, kind: 'file', size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 }
    this.#files.set(entry)
    if (digest === undefined) return
    if (digest !== null && content !== undefined) {
      return this.#files.track(this.d.store.put({ ...entry, digest, chunks: content.chunks, ...(content.sampled === true && { sampled: true }) }, { base: true }))
    }
    const base = { ...(digest !== null && { digest }), size: st.size, mtimeMs: st.mtimeMs }
    this.#files.track(this.d.store.delete(path).then(() => this.d.store.setBase(path, base)))
  }

  /** When the list is complete and every file is settled: --delete (only now: a file about to
   *  go may be the seed of a renamed one), directory times, then `done`. */
  #maybeFinish(): void {
    if (this.#finished || !this.#listDone || this.#transfers.size > 0) return
    this.#finished = true
    this.#scope.spawn(async () => {
      // Bases first: --delete reads them, and `done` promises them (but those of the files a
      // summary stood for, #recordImplied).
      await this.#files.flush()
      // A root found the same stands for everything here: no extras (and no walk of them).
      if (this.d.options.delete && !this.#impliedDirs.has('')) {
        await deleteExtras({
          root: this.d.root, store: this.d.store, options: this.d.options, signal: this.#signal,
          files: this.#files, listed: (path) => this.#senderLists(path), unread: this.#unread,
          event: (e) => this.#event(e), fail: (path, err) => this.#fail(path, err),
        })
      }
      // The renames become durable before the sender hears `done`. A folder --delete removed
      // since (a moved file's old one) has nothing left to sync.
      for (const dir of this.#dirty) {
        await syncDirectory(dir).catch((err: unknown) => {
          if (!isDsyncError(err, 'NOT_FOUND')) throw err
        })
      }
      // A moved file's old path is forgotten only now that its unlink is on disk: after a crash
      // in between, its base is still there, so the next --delete removes the name left behind
      // (a second name of the moved file) instead of keeping it as never synced.
      const moved = [...this.#movedTo.keys()]
      for (let i = 0; i < moved.length; i += FORGET_AT_ONCE) {
        await Promise.all(moved.slice(i, i + FORGET_AT_ONCE).flatMap((p) => [this.d.store.delete(p), this.d.store.deleteBase(p)]))
      }
      if (!this.d.options.dryRun) {
        // Deepest first: setting a parent's time must come after its children are written.
        for (const e of [...this.#dirs].reverse()) {
          try {
            await setMetadata(await this.#abs(e.path), { mtimeMs: e.mtimeMs }, { directory: true })
          } catch (err) {
            this.#fail(e.path, asFileError(err, e.path, 'set its time'))
          }
        }
      }
      this.#out.post({ t: 'done', summary: {} })
      await this.#out.flushed()
      await this.#recordImplied()
    })
  }

  /** The absolute path of `path` (checked by the codec), refusing one under a symlink. */
  async #abs(path: string): Promise<string> {
    return this.#files.dirs.abs(path)
  }

  /**
   * The walk's folders are real directories (lstat: not symlinks): a path in one needs no check
   * of its folders again (an lstat per component was the receiver's top system call on trees of
   * small files). Only this session writes the tree's structure: it makes symlinks only where
   * the walk found no directory, and forgets a folder it removes.
   */
  #knowWalkedDirs(): void {
    for (const e of this.#files.entries()) if (e.kind === 'dir') this.#files.dirs.add(e.path)
  }

  /** Makes the parent directory when the list did not (it always lists parents first; this is
   *  a safety net), and then knows it. */
  async #ensureParent(path: string, abs: string): Promise<void> {
    if (this.#files.dirs.has(parentDir(path))) return
    await mkdir(dirname(abs), { recursive: true })
    this.#files.dirs.abs(path)
  }
}

/** A seed's bytes for its signature: the copy held in memory (HELD_SEED_BYTES), else its files. */
function seedSource(paths: readonly string[], held: Uint8Array | undefined, signal: AbortSignal): AsyncIterable<Uint8Array> {
  return held !== undefined ? memorySeedSource(held) : openFilesSource(paths, { signal, noFollow: true })
}
