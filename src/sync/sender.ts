import {
  decodeRefineSignature, decodeSignature, EMPTY_SIGNATURE, encodeDelta, encodeMatchedDelta, encodeMatches, matchesPass, matchTarget, MAX_MATCHES, nextRefinement, refineMatches,
  preferredHasher, storedDelta, type DeltaStats, type Signature, type TargetCheck,
} from '../delta/index.js'
import { cutterFor } from '../chunk/index.js'
import { DsyncError, isDsyncError } from '../errors.js'
import { lstatSync } from 'node:fs'
import { fsError, memorySeedReader, openFileSource, openSeedReader, readRegular, readWholeUnchanged, unchangedWhileRead, type TreeEntry } from '../fs/index.js'
import { join } from 'node:path'
import { BUNDLE_PROTOCOL_VERSION, LIMITS, PROTOCOL_VERSION, SUMMARY_PROTOCOL_VERSION, type Channel, type FileEntry, type Message } from '../net/index.js'
import { POSTED_BYTES, probeAnchorFinder, sampleChunks, type FileRecord } from '../store/index.js'
import { digestBytes } from '../hash/index.js'
import { encodeSketchWithin, sketchStream, type TopAnchors } from '../similarity/index.js'
import { BUNDLE_FILE_BYTES, BundleBuilder } from './bundle.js'
import { dataFrames } from './data-frames.js'
import { ListOffer } from './list-offer.js'
import { TreeSummary } from './tree-summary.js'
import { LocalFiles } from './local-files.js'
import { Mailbox } from './mailbox.js'
import { PROBE_KEYS, probeKeys, probeWindows, WINDOWED_PROBE_BYTES, windowedProbeKeys } from './probe.js'
import type { Action, FileEvent, SyncReport } from './report.js'
import { SendChain } from './send-chain.js'
import { sessionError, SessionScope } from './session-scope.js'
import { listWindow, peerChecksDirectFast, peerReadsWindows, peerTakesFastCheck, speaksDirect, type RoleDeps } from './session.js'

/** Everything the sender role needs, given by the flow (push on the client, pull on the server). */
export interface SenderDeps extends RoleDeps {
  /** files streamed at once (default 8): small files are mostly latency (open, fsync on the
   *  receiver), which overlaps well; large ones share the socket either way */
  readonly concurrency?: number
  /** called with the size of each piece of file data sent */
  readonly onBytes?: (bytes: number) => void
  /** called with what the peer says in a `notice` (e.g. that the server waits for the tree) */
  readonly onNotice?: (message: string) => void
  /** this side's tree, already walked (two-way sync walks it once for both roles) */
  readonly files?: LocalFiles
  /** list only these paths (and the directories above them): two-way sync sends what its
   *  plan says, not the whole tree */
  readonly only?: ReadonlySet<string>
  /** how long a bundle may wait for more small files (default BUNDLE_HOLD_MS) */
  readonly bundleHoldMs?: number
}

/**
 * Above this many chunks (~2 MiB at 8 KiB) a file's chunk list goes as a sample (sampleChunks):
 * 20 bytes a chunk was 77 KiB of the 93 KiB a 30 MiB file with one insertion cost (bench/sync.ts),
 * against rsync -az's 40 KiB. Below it the whole list is cheap, and lets the receiver keep the
 * chunks as they are instead of chunking the file it wrote again.
 */
const SAMPLE_ABOVE_CHUNKS = 256

/**
 * Sketch anchors in a probe (PROTOCOL.md §4.6): one per 4 KiB of the file, 8 to 64 (4 bytes
 * each): the receiver's index posts a file's highest anchors, one per 4 KiB of a big file
 * (POSTED_BYTES), so these are the ones its base would have posted. Edits every ~100 bytes
 * keeping a quarter of the base leave a 64-byte window whole at ~7% of positions: 8 anchors then
 * all miss with probability 0.93^8 = 56%, 64 with 1-2% (bench/seeds.ts, scattered at 25%).
 */
function probeAnchorCount(size: number): number {
  return Math.min(LIMITS.maxProbeKeys, Math.max(PROBE_KEYS, Math.round(size / POSTED_BYTES)))
}
/** A list of at most this many chunks (≤ 16 × 20 bytes) goes instead of a probe asked for: it
 *  costs about as much, and saves the receiver a round trip if it finds a seed. */
const PROBE_ABOVE_CHUNKS = 16

/**
 * When a bundle goes (sendBundleSoon). It waits for the other small files the receiver has asked
 * for and not yet got, at most BUNDLE_HOLD_MS, and goes at once with BUNDLE_GO_FILES files: the
 * receiver keeps 64 files asked for, so it writes one half while the other is gathered. Sent as
 * soon as nothing was being read for it, the bundles of a first push of 20,000 small text files
 * held 12 files on average (14.7 MB; in 64s: 12.1 MB), and 10 new 512 KiB text files, asked for
 * over ~100 ms, went in bundles of 1–3.
 */
const BUNDLE_HOLD_MS = 100
const BUNDLE_GO_FILES = 32
/**
 * ...but not while the receiver is quiet this long: then it waits for what the sender holds (its
 * window full of files in the bundle, or decided and waiting for their data), and the rest of the
 * hold was dead time. 200 text files renamed and edited (bench/sync.ts "rename + edit"): bundles
 * went every ~100 ms with nothing on the wire in between, ~1 s of the push's 1.7 s; with this,
 * 1.76–2.07 → 1.03–1.09 s by hand, the same bytes (±1%). A first push of 5,000 small text files
 * to tmpfs, in turns: 2.02–2.18 s and 335–342 KB against 1.98–2.19 s and 336 KB without.
 */
const BUNDLE_QUIET_MS = 5

/** `want`s answered at once (each may be reading its file); more wait in the socket. */
const MAX_ANSWERING = 64

/** Files asked for by `want.direct` hashed ahead at once (prehash); the others are hashed in
 *  their match pass. Two keep a disk busy without a peer starting a read per message. */
const MAX_PREHASHES = 2

/**
 * Plans (and wants of whole files) queued for the file workers. A receiver keeps at most 64
 * files wanted (PROTOCOL.md §4), so an honest one never has more than that planned; past this
 * the peer is flooding, and the session ends (BAD_MESSAGE) rather than keep what it sends.
 * The message loop cannot wait for room instead: a worker in a refined exchange waits on it.
 */
const MAX_QUEUED_PLANS = 1024

/**
 * Files up to this size offer a similarity sketch (`sketchable`): ~16 KB of sketch per MiB in
 * format 1, 34 KB in format 2 (cut to fit a message when larger); it is read again to make it,
 * only when the receiver asks.
 */
const SKETCH_MAX_FILE_BYTES = 64 * 1024 * 1024

/** A file asked for whole (`want.whole`) is read in one go up to this size (the receiver asks so
 *  only for files of up to 4 chunks, ≤ 8 KiB at the defaults), and one asked for by `want.direct`
 *  (readWhole): the bound of synchronous reads (readRegular). */
const WHOLE_READ_BYTES = 256 * 1024

type PlanMessage = Extract<Message, { t: 'plan' }>
type ResultMessage = Extract<Message, { t: 'result' }>

/** What the sender knows of a file it is about to match, before reading it: the digest its list
 *  carried (not hashed again) and its size (sizes the matcher's window). */
interface KnownTarget {
  readonly digest?: TargetCheck
  readonly sizeHint?: number
  /** no digest: check it with XXH3-128 as it is read (a direct file: directCheck) */
  readonly fastCheck?: boolean
}

/**
 * The sender role: the side that has the files. It scans its tree (reading only files whose
 * size or mtime changed since the last scan), sends the list, answers the receiver's requests
 * for chunk lists, and streams a delta (or the whole file) for each plan it gets back.
 * Returns when the receiver says `done`.
 */
export async function runSender(channel: Channel, d: SenderDeps): Promise<void> {
  const scope = new SessionScope(d.signal, (err) => channel.fail(sessionError(err, 'sender')))
  const signal = scope.signal
  const level = d.options.compressLevel
  const out = new SendChain(channel)
  // A file or directory that cannot be read is one error line, here and at the receiver (so a
  // pull's exit code says the run was partial); the rest of the tree is synced.
  const skipped = (err: DsyncError): void => {
    d.report.add({ path: err.path ?? '', action: 'error', code: err.code, message: err.message })
    out.post({ t: 'notice', message: err.message, code: err.code, ...(err.path !== undefined && { path: err.path }) })
  }
  // The walk alone: a file is read when the receiver asks for it (or, with --checksum, all are).
  const files = d.files ?? await LocalFiles.scan(d.root, d.store, {
    params: d.params, exclude: d.options.exclude, checksum: d.options.checksum, keepContent: !d.options.checksum, signal, onError: skipped,
  })
  /** A listed file's absolute path, refused (UNSAFE_PATH) when a folder above it is a symlink
   *  now (it may have changed since the walk); each folder is checked once a session. */
  const inTree = (path: string): string => files.dirs.abs(path)
  const listable = d.only === undefined ? undefined : withParents(d.only)
  const cutter = cutterFor(d.params)
  const digests = new Map<string, FileRecord['digest']>()
  // With --checksum every file is listed with its digest; so is every file two-way sync sends
  // (`only`): the plan already knows they differ, and the receiver's quick check must not take
  // two edits of one size made in the same millisecond on two machines for the same file.
  const withDigests = d.options.checksum || d.only !== undefined
  if (withDigests) {
    await Promise.all([...files.entries()].filter((e) => e.kind === 'file' && (listable === undefined || listable.has(e.path))).map(async (e) => {
      const rec = await files.record(e.path)
      if (rec !== undefined) digests.set(e.path, rec.digest)
    }))
  }
  // A version-4 receiver is offered the list by directory summary (§4.9), except with digests
  // in it: the summaries cover size and mtime, not content. The list is then the whole walk, read
  // from it as the receiver asks (TreeListing), never held as entries: a no-op of 1,000,000
  // files held them in four places on this side.
  const post = (m: Message): void => out.post(m)
  let offer: ListOffer
  /** Whether `path` is a file of the list (or under a summary the receiver found the same):
   *  the only ones the receiver may ask for. */
  let inList: (path: string) => boolean
  /** The files of the list, with their sizes now. */
  let listedFiles: () => Iterable<{ readonly path: string; readonly size: number }>
  if ((d.version ?? PROTOCOL_VERSION) >= SUMMARY_PROTOCOL_VERSION && !withDigests) {
    const walked = files.walked
    const summary = TreeSummary.from(walked)
    const { files: count, bytes } = summary.totals('')
    d.report.countFiles(count, bytes)
    inList = (path) => walked.get(path)?.kind === 'file'
    listedFiles = function* () {
      for (const e of walked.under()) if (e.kind === 'file') yield { path: e.path, size: files.current(e)?.size ?? 0 }
    }
    d.onStoodFor?.('', summary)
    offer = ListOffer.bySummary(summary, post, listWindow(d))
  } else {
    const entries = wholeList(files, { listable, digests, withDigests, report: d.report })
    digests.clear()
    const sent = new Set(entries.filter((e) => e.kind === 'file').map((e) => e.path))
    inList = (path) => sent.has(path)
    listedFiles = function* () {
      for (const path of sent) yield { path, size: files.get(path)?.size ?? 0 }
    }
    d.onListed?.(entries)
    offer = ListOffer.whole(entries, post, listWindow(d))
  }
  offer.start()

  const paths = new Map<number, string>()
  /** paths the receiver sent a result for, and (at the end) those of this side's own events:
   *  the report may keep only some events (KeptEvents) */
  const reported = new Set<string>()
  /** what each file's chunk list said of it: its digest (the receiver expects it), size and mtime,
   *  until it is sent */
  const listedRecords = new Map<number, { digest: TargetCheck; size: number; mtimeMs: number }>()
  /**
   * A file asked for by `want.direct` (§4.12) of WINDOWED_PROBE_BYTES or more ends its delta with
   * its XXH3-128, not its SHA-256, where the receiver takes such a check (version 8): the
   * receiver's rebuild hashes what it writes (1 GiB with 1,024 overwrites: ~0.6 s of SHA-256
   * here, 1.9 s without SHA instructions, against ~0.25 s), and files it by size and mtime, as
   * a large file sent whole (§4.11), hashing it when first needed as a seed. A smaller one keeps
   * its SHA-256 (~35 ms at 64 MiB): its base's digest is what tells a copy only touched on the
   * receiver since from one changed there (a conflict).
   */
  const directCheck = (size: number | undefined): boolean => peerChecksDirectFast(d) && size !== undefined && size >= WINDOWED_PROBE_BYTES
  /** files probed by windows, whose SHA-256 neither side has computed: sent whole, they end
   *  with their XXH3-128 instead (§4.11), until a list of them goes or their result comes */
  const unhashed = new Set<number>()
  /**
   * A file of at most `max` bytes when listed, read in one go as readRecord reads for a chunk
   * list (readRegular). Undefined when it grew past that since (it streams then). `unchanged`:
   * checked unchanged while read (readWholeUnchanged; SOURCE_CHANGED otherwise), for a file
   * asked for by `want.direct`, whose one read serves its match pass, its hash and its rounds'
   * holes (three opens, stats and reads through the thread pool cost ~0.5 ms of this side's main
   * thread a file).
   */
  const readWhole = async (path: string, max: number, unchanged = false): Promise<Uint8Array | undefined> => {
    const e = files.get(path)
    if (e === undefined || e.size > max) return undefined
    const abs = inTree(path)
    try {
      return await (unchanged ? readWholeUnchanged(abs, e.size, path) : readRegular(abs, e.size, { noFollow: true }))
    } catch (err) {
      // Named by its path in the tree, as readRecord does: the peer is told of it.
      if (isDsyncError(err, 'NOT_FOUND')) throw new DsyncError('NOT_FOUND', `${path}: gone since the walk`, { path })
      if (isDsyncError(err, 'SOURCE_CHANGED')) throw err
      throw fsError(err, path, 'read it')
    }
  }
  const stats = new Map<number, DeltaStats>()
  /** plans for the workers; `unlisted`: for a file whose chunk list never went (made here for a
   *  `want.whole`, or come for a `want.direct`) */
  const plans: { plan: PlanMessage; unlisted: boolean }[] = []
  /** ids with a plan queued or being sent: a second plan for one is the peer's error (a file is
   *  planned again only after its data ended: a whole retry) */
  const planned = new Set<number>()
  const queuePlan = (plan: PlanMessage, unlisted = false): void => {
    if (plans.length >= MAX_QUEUED_PLANS) {
      throw new DsyncError('BAD_MESSAGE', `the receiver planned more than ${MAX_QUEUED_PLANS} files not yet sent; a receiver keeps at most 64 wanted`)
    }
    if (planned.has(plan.id)) throw new DsyncError('BAD_MESSAGE', `a second plan for file id ${plan.id} before the first was sent`)
    planned.add(plan.id)
    plans.push({ plan, unlisted })
  }
  /** ids asked for by `want.direct` whose plan has not come (§4.12) */
  const directs = new Set<number>()
  /** the hash of such a file, under way or done (prehash), until its plan or result comes */
  const prehashes = new Map<number, Promise<void>>()
  /**
   * A file asked for by `want.direct` is hashed while the receiver makes its signature, which
   * this side would otherwise wait for idle; its check then ends the delta as a chunk list's
   * digest would (listedRecords), so the match pass does not hash (~0.6 of its ~1.9 s a GiB here).
   * Changed since, the match pass hashes it again (sendFile's statUnchanged). At most
   * MAX_PREHASHES at once: past that a file is hashed in its match pass, as without. The check is
   * its XXH3-128 where the receiver takes one (directCheck).
   */
  const prehash = async (id: number, path: string): Promise<void> => {
    try {
      const abs = inTree(path)
      const st = lstatSync(abs)
      const h = await preferredHasher(directCheck(st.size))
      for await (const bytes of unchangedWhileRead(openFileSource(abs, { signal, noFollow: true }), abs, path)) h.update(bytes)
      // Not for a file settled meanwhile (its result came: no plan will).
      if (prehashes.has(id)) listedRecords.set(id, { digest: h.digest(), size: st.size, mtimeMs: st.mtimeMs })
    } catch (err) {
      if (signal.aborted) throw err
      // Policy: no digest from before; the match pass hashes the file, and meets its error.
    }
  }
  let prehashing = 0
  /** Sends file `id` whole as if a whole `plan` had come (a `want.whole`, or a `wholeWant` after
   *  its probe): nothing sent and it cannot be read, it ends quietly with a notice (none for a
   *  file gone since), as an unreadable file's chunk list does. */
  const queueWhole = (id: number): void => {
    queuePlan({ t: 'plan', id, method: 'whole', seed: null, similarity: 0, signature: null }, true)
    wake()
  }
  /** Paths whose chunk list (or whole content) went out once: asked again, the file changed
   *  while it was sent. */
  const listed = new Set<string>()
  const idle: (() => void)[] = []
  const wake = (): void => idle.splice(0).forEach((f) => f())
  let done = false
  let receiverDone = false
  const worker = async (): Promise<void> => {
    for (;;) {
      const next = plans.shift()
      if (next !== undefined) {
        try {
          // Once the receiver is done, nothing more goes: a plan still queued is one it left.
          if (!receiverDone) await sendFile(next.plan, next.unlisted)
        } finally {
          planned.delete(next.plan.id)
        }
        continue
      }
      if (done || signal.aborted) return
      await new Promise<void>((r) => idle.push(r))
    }
  }
  /** Refinement rounds in flight: the `refine` messages of each file, taken in order. */
  const refining = new Map<number, Mailbox<Extract<Message, { t: 'refine' }>>>()
  /** files the receiver gave up during their exchange (`refine.cancel`, or its `done`), with the
   *  error that ended it */
  const givenUp = new Map<number, DsyncError>()
  /** Ends file `id`'s exchange on the receiver's word: its worker stops with this error. */
  const giveUp = (id: number, why: string): DsyncError => {
    const err = new DsyncError('ABORTED', why)
    givenUp.set(id, err)
    return err
  }
  /**
   * A refined exchange (PROTOCOL.md §4.1): the matches of round 1's signature, then, per
   * `refine` with a signature, the matches found again in the holes, until the receiver says
   * no more; the delta then copies every match. The file is read once for round 1 and then only
   * in its holes, at their offsets. `ends` (the plan's, version 9): the receiver says nothing
   * after the last list when its rule (nextRefinement, and matchesPass) ends the rounds there;
   * this side runs the same rule and sends the delta at once: a round trip less per file
   * (PROTOCOL.md §4.1 has the figures).
   */
  const refinedDelta = async (plan: PlanMessage, path: string, sig: Signature, source: AsyncIterable<Uint8Array> | Uint8Array[], kept: Uint8Array | undefined, known: KnownTarget, direct: boolean) => {
    const id = plan.id
    // The receiver's `done` came while this file waited to start (for its prehash): it is over.
    if (receiverDone) throw giveUp(id, 'the receiver ended the session')
    const rounds = new Mailbox<Extract<Message, { t: 'refine' }>>(signal, 'refine')
    refining.set(id, rounds)
    const reader = kept !== undefined ? memorySeedReader(kept) : await openSeedReader(inTree(path), { noFollow: true, syncSmall: true })
    try {
      const stream = Array.isArray(source) ? (async function* () { yield* source })() : source
      let { list, digest } = await matchTarget(sig, stream, { signal, ...known })
      let block = sig.blockSize
      for (let round = 0; ; round++) {
        // A list too long for one message goes empty (DELTA.md): the receiver then stops.
        const sent = list.matches.length > MAX_MATCHES ? { ...list, matches: [] } : list
        await channel.send({ t: 'matches', id, list: encodeMatches(sent) })
        if (plan.ends === true && nextRefinement(sent, block, round, direct) === null && matchesPass(sent, d.options.metric, d.options.threshold).passes) break
        const r = await rounds.next()
        if (r.cancel === true) throw giveUp(id, `${path}: given up by the receiver`)
        if (r.signature === null) {
          // Measured below the threshold by the rounds (PROTOCOL.md §4.3): literals only, as a
          // whole file goes.
          if (r.whole === true) list = { ...list, matches: [] }
          break
        }
        let theirs
        try {
          theirs = decodeRefineSignature(r.signature, list)
        } catch (err) {
          throw new DsyncError('BAD_MESSAGE', `refinement signature for ${path}: ${(err as Error).message}`, { cause: err })
        }
        list = await refineMatches(list, theirs, reader, { signal })
        block = theirs.blockSize
      }
      const delta = encodeMatchedDelta(list, reader, digest, { signal, level })
      return {
        bytes: (async function* () {
          try {
            yield* delta.bytes
          } finally {
            await reader.close()
          }
        })(),
        stats: () => delta.stats(),
      }
    } catch (err) {
      await reader.close()
      throw err
    } finally {
      refining.delete(id)
    }
  }
  /**
   * A file that could not be sent: the error is the session's (thrown) or the file's. The
   * receiver then sees a truncated delta (or its refined exchange ends) and drops the file; the
   * reason is reported here. Sent with no chunk list (`unlisted`) and nothing sent, it drops the
   * file quietly: a notice tells it why (as an unreadable file's chunk list does), and a file
   * gone since the walk is no error. `exchanging`: the receiver waits on the file's data or
   * matches (something was sent, or a refined exchange began).
   */
  const fileFailed = async (err: unknown, id: number, path: string, unlisted: boolean, sentAny: boolean, exchanging: boolean): Promise<void> => {
    if (!isDsyncError(err) || err.code === 'ABORTED' || err.code === 'NETWORK' || err.code === 'BAD_MESSAGE') throw err
    if (err.code === 'SOURCE_CHANGED' && exchanging) {
      // Changed while it was read, with no digest sent before (unchangedWhileRead): the receiver
      // is told before the data ends short (or its exchange ends), and asks again or says what
      // became of it.
      await channel.send({ t: 'notice', message: err.message, code: err.code, path })
      return
    }
    if (unlisted && !sentAny) {
      // Named by its path in the tree, as readRecord's errors are: the peer is told of it.
      if (err.code !== 'NOT_FOUND') skipped(err.path === path ? err : new DsyncError(err.code, err.message.replaceAll(join(d.root, path), path), { path, cause: err }))
    } else {
      d.report.add({ path, action: 'error', code: err.code, message: err.message })
    }
    paths.delete(id)
  }
  /** Same size and mtime as when listed (a file gone or unreadable is not). */
  const statUnchanged = (abs: string, listed: { size: number; mtimeMs: number }): boolean => {
    try {
      const st = lstatSync(abs)
      return st.size === listed.size && st.mtimeMs === listed.mtimeMs
    } catch {
      // Policy: unknown is changed; the read that follows says what is wrong with the file.
      return false
    }
  }
  const sendFile = async (plan: PlanMessage, unlisted: boolean): Promise<void> => {
    const path = paths.get(plan.id)
    if (path === undefined) throw new DsyncError('BAD_MESSAGE', `plan for file id ${plan.id}, which was never asked for`)
    const whole = unlisted && plan.method === 'whole'
    if (forBundle(plan) && (await bundled(plan.id, path, whole))) return
    await prehashes.get(plan.id)
    prehashes.delete(plan.id)
    let sentAny = false
    try {
      const sig = plan.signature === null ? EMPTY_SIGNATURE : decodeSignature(plan.signature)
      // A small file is sent from what was read for its chunk list (or, asked for whole, read
      // now in one synchronous read, as for a chunk list); others are read again.
      const direct = unlisted && plan.method !== 'whole'
      const taken = files.takeContent(path)
      const read = taken === undefined && direct ? await readWhole(path, WHOLE_READ_BYTES, true) : undefined
      const kept = taken ?? read ?? (whole ? await readWhole(path, WHOLE_READ_BYTES) : undefined)
      // Sent whole, a file is read into a new buffer each time, which its literal frames keep
      // instead of copying (DeltaWriter.literal).
      const fresh = plan.method === 'whole' && kept === undefined
      // So are the bytes kept from its read: this side's alone, never written again. Copied into
      // the writer's frame and out of it again, 10 new files of 1 MiB cost the sender ~60 ms of
      // copies into new memory, whose first touch is what costs here (bench/README.md).
      const owned = fresh || kept !== undefined
      // A file whose list went out is not hashed again: the digest the list carried ends the
      // delta, and the receiver, which checks the bytes against it, asks again if the file
      // changed in between (sent whole: a mismatch is a changed source; as a delta: it is sent
      // whole, hashed afresh). 0.15 of the sender's 1.4 CPU s for 256 MiB sent whole; ~0.6 s of
      // a 1 GiB file's match.
      const listed = listedRecords.get(plan.id)
      listedRecords.delete(plan.id)
      // (A direct file read whole just now is hashed from those bytes in its match pass.)
      let digest = read === undefined ? listed?.digest : undefined
      let source: Uint8Array[] | AsyncIterable<Uint8Array> = [kept!]
      if (kept === undefined) {
        const abs = inTree(path)
        // Changed since its list (size or mtime): hashed as it is read, so that the receiver
        // sees at once that these are not the listed bytes (SOURCE_CHANGED: it asks again),
        // rather than a delta that fails its digest, which it takes for a false block match
        // and answers by asking for the whole file first.
        if (listed !== undefined && !statUnchanged(abs, listed)) digest = undefined
        source = openFileSource(abs, { signal, noFollow: true, fresh })
        // With no digest from before (a large file probed by windows), the check is of the
        // bytes as read: a file that changed meanwhile must not pass for one version.
        if (digest === undefined) source = unchangedWhileRead(source, abs, path)
      }
      const sizeHint = kept?.length ?? listed?.size ?? files.get(path)?.size
      const known: KnownTarget = { ...(digest !== undefined && { digest }), ...(sizeHint !== undefined && { sizeHint }), ...(direct && directCheck(sizeHint) && { fastCheck: true }) }
      // Sent whole and hashed by no one yet: checked with XXH3-128, 2.4× faster than SHA-256
      // here and 7.7× where the CPU has no SHA instructions (§4.11, src/hash/stream-check.ts).
      const fastCheck = fresh && digest === undefined && unhashed.has(plan.id) && peerTakesFastCheck(d)
      const delta = plan.refine === true
        ? await refinedDelta(plan, path, sig, source, kept, known, direct)
        : encodeDelta(sig, source, { signal, level, ownedInput: owned, fastCheck, ...known })
      for await (const bytes of dataFrames(delta.bytes)) {
        await channel.send({ t: 'data', id: plan.id, bytes })
        sentAny = true
        d.onBytes?.(bytes.length)
      }
      stats.set(plan.id, delta.stats())
    } catch (err) {
      // Given up by the receiver during its exchange: it says what became of the file.
      const gaveUp = givenUp.get(plan.id)
      givenUp.delete(plan.id)
      if (gaveUp !== undefined && err === gaveUp) {
        if (receiverDone) return // and the session is over: nothing more goes
        await channel.send({ t: 'dataEnd', id: plan.id })
        return
      }
      // (A receiver before version 7 waits for matches whatever comes: it is told nothing more.)
      await fileFailed(err, plan.id, path, unlisted, sentAny, sentAny || (plan.refine === true && speaksDirect(d)))
    }
    await channel.send({ t: 'dataEnd', id: plan.id })
    // A file with no list that sent nothing is dropped quietly by the receiver: no result.
    if (sentAny || !unlisted) unsettled.add(plan.id)
    if (smallWanted.delete(plan.id)) sendBundleSoon()
  }

  /** Whole files gathered for the next `bundle` (PROTOCOL.md §4.7): a receiver of version 3 on. */
  const bundle = (d.version ?? PROTOCOL_VERSION) >= BUNDLE_PROTOCOL_VERSION ? new BundleBuilder() : undefined
  /** files being read for the bundle; files small enough for it that the receiver asked for and
   *  has not got (nor settled otherwise): they may go in it next */
  let bundleReads = 0
  const smallWanted = new Set<number>()
  /** files sent (in a bundle or `data`) whose `result` has not come: each frees a slot of the
   *  receiver's want window when it does, and its next `want` may come for the bundle */
  const unsettled = new Set<number>()
  let bundleSendQueued = false
  /** when the bundle's first file went in, and the timer that sends it BUNDLE_HOLD_MS later */
  let bundleSince = 0
  let bundleHold: NodeJS.Timeout | undefined
  /** when the last message from the receiver was taken (BUNDLE_QUIET_MS), and whether the
   *  message loop is held (it takes no more until a want is answered) */
  let lastHeard = performance.now()
  let loopHeld = false
  /** A plan the bundle takes: a whole file, of at most BUNDLE_FILE_BYTES when listed. */
  const forBundle = (plan: PlanMessage): boolean =>
    bundle !== undefined && plan.method === 'whole' && plan.refine !== true && plan.signature === null && (files.get(paths.get(plan.id) ?? '')?.size ?? Infinity) <= BUNDLE_FILE_BYTES
  /** bundles go out in the order they were taken (each is compressed with those before it) */
  let bundlesOut: Promise<void> = Promise.resolve()
  const sendBundle = async (msg: Extract<Message, { t: 'bundle' }> | undefined): Promise<void> => {
    if (msg === undefined) return
    for (const s of msg.streams) {
      smallWanted.delete(s.id)
      unsettled.add(s.id)
    }
    const sent = bundlesOut.then(() => channel.send(msg))
    bundlesOut = sent.catch(() => undefined) // the session fails through the sender that awaits it
    await sent
    d.onBytes?.(msg.z.length)
  }
  /**
   * Sends the bundle once no file is being read for it, no plan for it is queued and the messages
   * already come in are handled (a burst of `wholeWant`s, which setImmediate waits for), and then
   * when it holds BUNDLE_GO_FILES files, or has waited BUNDLE_HOLD_MS, or when no more can come:
   * it holds every small file the receiver asked for and has not got, and every file sent has
   * its `result` (each result frees a slot of the receiver's window: a `want` may follow). A
   * file that does not fit sends it first.
   */
  const sendBundleSoon = (): void => {
    if (bundleSendQueued || bundle === undefined || bundle.count === 0) return
    bundleSendQueued = true
    setImmediate(() => {
      bundleSendQueued = false
      if (done || signal.aborted || bundle.count === 0 || bundleReads > 0 || plans.some((p) => forBundle(p.plan))) return
      const now = performance.now()
      const held = now - bundleSince
      // Messages waiting in the socket while the loop is held (MAX_ANSWERING) are not quiet.
      const quiet = loopHeld ? 0 : now - lastHeard
      const more = smallWanted.size > bundle.count || unsettled.size > 0
      const hold = d.bundleHoldMs ?? BUNDLE_HOLD_MS
      if (more && bundle.count < BUNDLE_GO_FILES && held < hold && quiet < BUNDLE_QUIET_MS) {
        bundleHold ??= setTimeout(() => {
          bundleHold = undefined
          sendBundleSoon()
        }, Math.max(1, Math.min(hold - held, BUNDLE_QUIET_MS - quiet)))
        return
      }
      clearTimeout(bundleHold)
      bundleHold = undefined
      scope.spawn(() => sendBundle(bundle.take(level)))
    })
  }
  /** Puts file `id`, sent whole, in the bundle as its whole data stream (a delta of stored
   *  literals: the bundle compresses them all at once). False when it grew too large for it
   *  since it was listed: it streams then. A file that cannot be read ends as in sendFile. */
  const bundled = async (id: number, path: string, whole: boolean): Promise<boolean> => {
    bundleReads++
    try {
      const content = files.takeContent(path) ?? (await readWhole(path, BUNDLE_FILE_BYTES))
      if (content === undefined) return false
      // As in sendFile: the listed digest, which the receiver checks the bytes against.
      const digest = listedRecords.get(id)?.digest ?? digestBytes(content)
      listedRecords.delete(id)
      const stream = storedDelta(content, digest)
      const size = stream.reduce((a, b) => a + b.length, 0)
      const full = bundle!.fits(size) ? undefined : bundle!.take(level)
      if (bundle!.count === 0) bundleSince = performance.now()
      bundle!.add(id, stream)
      stats.set(id, { targetSize: content.length, copiedBytes: 0, literalBytes: content.length, encodedBytes: size })
      await sendBundle(full)
    } catch (err) {
      await fileFailed(err, id, path, whole, false, false)
      smallWanted.delete(id)
      await channel.send({ t: 'dataEnd', id })
    } finally {
      bundleReads--
      sendBundleSoon()
    }
    return true
  }
  for (let i = 0; i < (d.concurrency ?? 8); i++) scope.spawn(worker)
  signal.addEventListener('abort', wake, { once: true })

  /** The entry of a file this side listed, which alone the receiver may ask for. */
  const listedFile = (path: string): TreeEntry => {
    const e = files.get(path)
    if (e?.kind !== 'file' || !inList(path)) throw new DsyncError('BAD_MESSAGE', `the receiver asked for ${path}, which is not a file of the list`)
    return e
  }
  /** The record to send for a wanted path, read now unless the store's is current; asked
   *  again (the receiver saw the file change while it was being sent), the file is looked at
   *  afresh. Undefined when it vanished or cannot be read (`skipped` said why). */
  const recordFor = async (path: string): Promise<FileRecord | undefined> => {
    await lookAfresh(path)
    return files.record(path)
  }
  /** The entry of a wanted file, looked at again when it was asked for before. */
  const lookAfresh = async (path: string): Promise<TreeEntry | undefined> => {
    const e = listedFile(path)
    if (listed.has(path)) {
      try {
        const st = lstatSync(inTree(path))
        files.set({ ...e, size: st.size, mtimeMs: st.mtimeMs })
        await files.forget(path) // read afresh, whatever its size and mtime say
      } catch {
        files.delete(path) // gone: the read says so
      }
    }
    listed.add(path)
    return files.get(path)
  }
  /**
   * A probe of a large file from windows of its bytes (probe.ts): no record, so nothing read
   * whole before the receiver has said whether it holds a seed. Sent whole next, the file is
   * read once, and checked as it goes (its XXH3-128 ends the delta: §4.11). False when the file is not
   * one for windows; true when answered (with an empty list if it cannot be read now).
   */
  const windowedProbe = async (msg: Extract<Message, { t: 'want' }>): Promise<boolean> => {
    const e = files.get(msg.path)
    const windows = msg.probe === true && msg.digest !== true && e?.kind === 'file' ? probeWindows(e.size, d.params) : undefined
    if (windows === undefined) return false
    const now = await lookAfresh(msg.path)
    const at = now === undefined ? undefined : probeWindows(now.size, d.params)
    let keys: Uint8Array | undefined
    let abs = msg.path
    try {
      abs = inTree(msg.path)
      if (at !== undefined) keys = await windowedProbeKeys(abs, at, cutter, signal)
    } catch (err) {
      if (!isDsyncError(err) || err.code === 'ABORTED') throw err
      // Named by its path in the tree, as readRecord's errors are: the peer is told of it.
      if (err.code !== 'NOT_FOUND') skipped(new DsyncError(err.code, err.message.replaceAll(abs, msg.path), { path: msg.path, cause: err }))
    }
    if (now === undefined || at === undefined || keys === undefined) {
      noteRecord(msg.id, msg.path, undefined)
      postList(msg.id, undefined)
      return true
    }
    paths.set(msg.id, msg.path)
    probed.add(msg.id)
    unhashed.add(msg.id)
    out.post({ t: 'probe', id: msg.id, size: now.size, keys })
    return true
  }

  /** What is kept of the record read for file `id`: its path, and the digest a whole send of it
   *  ends with. None read (gone, or unreadable: `skipped` said why): the id is dropped, and the
   *  empty list that follows has the receiver settle it without a result. */
  const noteRecord = (id: number, path: string, rec: FileRecord | undefined): void => {
    if (rec !== undefined) {
      paths.set(id, path)
      listedRecords.set(id, { digest: rec.digest, size: rec.size, mtimeMs: rec.mtimeMs })
      unhashed.delete(id) // its list, with its digest, goes now
    } else {
      paths.delete(id)
      smallWanted.delete(id)
    }
  }

  const answerWant = async (msg: Extract<Message, { t: 'want' }>): Promise<void> => {
    if (await windowedProbe(msg)) return
    const rec = await recordFor(msg.path)
    noteRecord(msg.id, msg.path, rec)
    if (rec !== undefined && msg.probe === true && rec.chunks.length > PROBE_ABOVE_CHUNKS) {
      // A file at a new path (§4.6): a few keys for the receiver to look up instead of a list
      // nobody may use (a new 1 MiB file's list is 2.5 KB; a probe ~60 bytes).
      probed.add(msg.id)
      // A version-3 receiver also looks the file up by its similarity sketch's anchors, which
      // edits closer than a chunk leave in place (a 256 KiB file: ~2 ms of sketching).
      const anchors = bundle !== undefined ? await sketchAnchors(msg.path, rec.size) : undefined
      out.post({
        t: 'probe', id: msg.id, size: rec.size, keys: probeKeys(rec.chunks),
        ...(msg.digest === true && { digest: rec.digest }), ...(anchors !== undefined && { anchors }),
      })
      return
    }
    postList(msg.id, rec)
  }
  /** A probe's anchors (PROTOCOL.md §4.6): the sketch's top posting keys (found without the
   *  sketch: probeAnchorFinder), from the bytes read for the file's record when they are still
   *  kept, else read again; undefined when the file cannot be read now (the probe goes without
   *  them). The finder is given the file's size; in the rare file whose anchors repeat too much
   *  for it, it asks for the bytes again, and a finder without the size takes them. */
  const sketchAnchors = async (path: string, size: number): Promise<number[] | undefined> => {
    const n = probeAnchorCount(size)
    const feed = async (top: TopAnchors): Promise<number[] | undefined> => {
      const kept = files.keptContent(path)
      if (kept !== undefined) top.update(kept)
      else for await (const piece of openFileSource(inTree(path), { signal, noFollow: true })) top.update(piece)
      return top.finish()
    }
    try {
      return (await feed(probeAnchorFinder(n, { size }))) ?? (await feed(probeAnchorFinder(n)))
    } catch (err) {
      if (!isDsyncError(err) || err.code === 'ABORTED') throw err
      return undefined // Policy: no anchors; the keys alone, as an older sender's probe.
    }
  }
  /** A file's chunk list, in as many `chunks` messages as it takes; for a file gone or
   *  unreadable now, an empty list with no digest, which tells the receiver to give up. */
  const postList = (id: number, rec: FileRecord | undefined): void => {
    if (rec === undefined) {
      out.post({ t: 'chunks', id, size: 0, chunks: [] })
      return
    }
    // A record that is itself a sample (a large file this side received) goes as it is.
    const sampled = rec.sampled === true || rec.chunks.length > SAMPLE_ABOVE_CHUNKS
    const list = sampled && rec.sampled !== true ? sampleChunks(rec.chunks) : rec.chunks
    const n = list.length
    for (let i = 0; i === 0 || i < n; i += LIMITS.maxChunksPerMessage) {
      const end = i + LIMITS.maxChunksPerMessage
      out.post({
        t: 'chunks',
        id,
        size: rec.size,
        chunks: list.slice(i, end),
        ...(sampled && { sampled: true }),
        ...(end < n ? { more: true } : { digest: rec.digest, refinable: true, ...(rec.size <= SKETCH_MAX_FILE_BYTES && { sketchable: true }) }),
      })
    }
  }
  /** The similarity sketch of a file whose chunk lists put it below the threshold (the receiver
   *  asks): read again, or null when it is too large or cannot be read now. */
  const sendSketch = async (id: number, path: string): Promise<void> => {
    let sketch: Uint8Array | null = null
    try {
      const e = files.get(path)
      if (e !== undefined && e.size <= SKETCH_MAX_FILE_BYTES) {
        const format = peerReadsWindows(d) ? 2 : 1
        const full = await sketchStream(openFileSource(inTree(path), { signal, noFollow: true }), { windows: format === 2 })
        // Long repeats can hold more anchors than a message (a 64 MiB file of one 2 KiB block: 3.9 MB).
        sketch = encodeSketchWithin(full, format, LIMITS.maxSketchBytes)
      }
    } catch (err) {
      if (!isDsyncError(err) || err.code === 'ABORTED' || err.code === 'NETWORK') throw err
      // Policy: no sketch; the receiver decides from the chunk lists, as without one.
    }
    out.post({ t: 'sketch', id, sketch })
  }

  /** ids whose sketch was asked for */
  const sketched = new Set<number>()
  /** ids answered with a probe whose chunk list was not asked for since */
  const probed = new Set<number>()
  /** wants being answered, and the message loop waiting for one to end (it alone waits) */
  let answering = 0
  let onAnswered: (() => void) | undefined

  try {
    for await (const msg of channel.messages()) {
      if (scope.failure !== undefined) throw scope.failure
      lastHeard = performance.now()
      if (msg.t === 'want' && msg.whole === true) {
        // A small new file the receiver can build from nothing it has: no chunk list, no
        // plan; it goes whole now, one read (PROTOCOL.md §4).
        listedFile(msg.path)
        paths.set(msg.id, msg.path)
        listed.add(msg.path) // asked again (it grew, or changed while read), it is read afresh
        if (bundle !== undefined) smallWanted.add(msg.id)
        queueWhole(msg.id)
      } else if (msg.t === 'want' && msg.direct === true) {
        // A large file changed where the receiver's old version of it is the seed (§4.12): no
        // list; it is hashed now (prehash), and the refined plan that follows reads it for its
        // matches.
        listedFile(msg.path)
        if (paths.has(msg.id) || directs.has(msg.id)) throw new DsyncError('BAD_MESSAGE', `want for file id ${msg.id}, which names a file already`)
        if (directs.size >= MAX_QUEUED_PLANS) throw new DsyncError('BAD_MESSAGE', `the receiver asked for more than ${MAX_QUEUED_PLANS} files without a list and planned none of them`)
        paths.set(msg.id, msg.path)
        listed.add(msg.path) // asked again (it changed while read), it is read afresh
        directs.add(msg.id)
        // A small one is hashed in its match pass, from the one read that serves it all (readWhole).
        if (prehashing < MAX_PREHASHES && (files.get(msg.path)?.size ?? 0) > WHOLE_READ_BYTES) {
          prehashing++
          const { id, path } = msg
          prehashes.set(id, new Promise<void>((settled) => scope.spawn(() => prehash(id, path), () => {
            prehashing--
            settled()
          })))
        }
      } else if (msg.t === 'want') {
        // Answered in a task: the file may have to be read first, and reads overlap. A peer
        // that asks faster than files are read waits here (the receiver keeps 64 asked).
        if (answering >= MAX_ANSWERING) {
          loopHeld = true
          await new Promise<void>((r) => (onAnswered = r))
          loopHeld = false
        }
        answering++
        if (bundle !== undefined && (files.get(msg.path)?.size ?? Infinity) <= BUNDLE_FILE_BYTES) smallWanted.add(msg.id)
        scope.spawn(() => answerWant(msg), () => {
          answering--
          onAnswered?.()
          onAnswered = undefined
        })
      } else if (msg.t === 'summaryWant') {
        offer.answer(msg.paths)
      } else if (msg.t === 'listRoom') {
        if (listWindow(d) === undefined) throw new DsyncError('BAD_MESSAGE', `listRoom in a session of version ${d.version}, which lists unpaced`)
        offer.room(msg.upTo)
      } else if (msg.t === 'chunksWant' || msg.t === 'wholeWant') {
        const path = paths.get(msg.id)
        // Once, after a probe: a flood of asks would each read a record, or queue a send.
        if (path === undefined || !probed.delete(msg.id)) throw new DsyncError('BAD_MESSAGE', `${msg.t} for file id ${msg.id}, which was not answered with a probe (or was asked already)`)
        if (msg.t === 'chunksWant') {
          scope.spawn(async () => {
            // After a probe by windows the record is read only now.
            const rec = await files.record(path)
            noteRecord(msg.id, path, rec)
            postList(msg.id, rec)
          })
        } else {
          queueWhole(msg.id)
        }
      } else if (msg.t === 'sketchWant') {
        const path = paths.get(msg.id)
        if (path === undefined) throw new DsyncError('BAD_MESSAGE', `sketch asked for file id ${msg.id}, whose chunk list was never sent`)
        // Once a file: each sketch reads the file again, and a flood of asks would each spawn one.
        if (sketched.has(msg.id)) throw new DsyncError('BAD_MESSAGE', `sketch asked twice for file id ${msg.id}`)
        sketched.add(msg.id)
        scope.spawn(() => sendSketch(msg.id, path))
      } else if (msg.t === 'refine') {
        const rounds = refining.get(msg.id)
        // A cancel may cross the exchange's end (this side failed the file meanwhile): it asks
        // for nothing, so it is dropped.
        if (rounds === undefined && msg.cancel === true) continue
        if (rounds === undefined) throw new DsyncError('BAD_MESSAGE', `refine for file id ${msg.id}, which has no refined exchange going`)
        rounds.push(msg)
      } else if (msg.t === 'plan') {
        queuePlan(msg, directs.delete(msg.id))
        wake()
      } else if (msg.t === 'result') {
        // Settled: its slot of the receiver's window frees (it may have come without data: a copy).
        const was = smallWanted.delete(msg.id)
        unhashed.delete(msg.id)
        // A direct want the receiver settled before planning it (it failed there): no plan comes.
        directs.delete(msg.id)
        prehashes.delete(msg.id)
        listedRecords.delete(msg.id)
        if (unsettled.delete(msg.id) || was) sendBundleSoon()
        if (msg.id === 0 || paths.has(msg.id)) {
          const event = eventFromResult(msg, stats.get(msg.id))
          d.report.add(event)
          d.onSettled?.(event)
          reported.add(msg.path)
        }
      } else if (msg.t === 'done') {
        receiverDone = true
        // An exchange still open is one the receiver left (an older one sends no cancel): its
        // worker would wait for a round that never comes.
        for (const [id, rounds] of refining) {
          const err = giveUp(id, 'the receiver ended the session')
          rounds.close(() => err)
        }
        break
      } else if (msg.t === 'notice') {
        d.onNotice?.(msg.message)
      } else {
        throw new DsyncError('BAD_MESSAGE', `unexpected "${msg.t}" message from the receiver`)
      }
    }
  } catch (err) {
    // The first failure is the one to tell: a failed file stream closes the channel, which
    // then also ends the message loop.
    const first = scope.failure ?? err
    scope.abort(first)
    await scope.settled().catch(() => undefined)
    throw first
  } finally {
    done = true
    wake()
    clearTimeout(bundleHold)
  }
  if (!receiverDone) {
    // Closed without `done`: every task of the session stops (a worker waiting for a round
    // would wait for good, and a served tree stay locked). A failed task's error says why.
    const err = scope.failure ?? new DsyncError('NETWORK', 'the receiver ended the session before it was done; run the command again')
    scope.abort(err)
    await scope.settled().catch(() => undefined)
    throw err
  }
  await scope.settled() // a failed file stream ended the session: its error says why
  await files.flush()
  await out.flushed()
  // Unchanged files cost no message on the wire (a no-op sync stays small): they are the files
  // the receiver reported nothing about.
  // A file asked for is not unchanged: without a word on it from the receiver, say so.
  for (const e of d.report.events) reported.add(e.path)
  const wanted = new Set(paths.values())
  let unchanged = 0
  let unchangedBytes = 0
  for (const { path, size } of listedFiles()) {
    if (reported.has(path)) continue
    if (wanted.has(path)) d.report.add({ path, action: 'error', code: 'BAD_MESSAGE', message: `${path}: asked for, but the receiver never said what became of it; run again` })
    else if (d.report.wantsEachUnchanged) d.report.add({ path, action: 'unchanged', size })
    else {
      unchanged++
      unchangedBytes += size
    }
  }
  d.report.countUnchanged(unchanged, unchangedBytes)
  d.report.countScan(files.filesRead)
}

/**
 * The sender's list as entries, whole (to a receiver of version 3 or less, or with digests):
 * the files of `listable` only (two-way sync's), each with its digest when `withDigests` (a file
 * with none is left out: vanished or unreadable). Counts the files in `report`.
 */
function wholeList(
  files: LocalFiles,
  o: { listable: ReadonlySet<string> | undefined; digests: ReadonlyMap<string, FileRecord['digest']>; withDigests: boolean; report: SyncReport },
): FileEntry[] {
  const entries: FileEntry[] = []
  for (const e of files.entries()) {
    if (o.listable !== undefined && !o.listable.has(e.path)) continue
    if (e.kind === 'file') {
      if (o.withDigests && !o.digests.has(e.path)) continue // vanished or unreadable
      o.report.countFiles(1, e.size)
    }
    if (!o.withDigests) {
      entries.push(e as FileEntry) // made for this list (TreeListing): a symlink's target always read
      continue
    }
    entries.push({
      path: e.path,
      kind: e.kind,
      size: e.size,
      mtimeMs: e.mtimeMs,
      mode: e.mode,
      // Digests only with --checksum: the receiver's quick check uses size and mtime, and asks
      // for the digest (with the chunks) of a file that differs.
      ...(e.kind === 'file' && { digest: o.digests.get(e.path)! }),
      ...(e.kind === 'symlink' && { target: e.target ?? '' }),
    })
  }
  return entries
}

/** `paths` and every directory above them. */
function withParents(paths: ReadonlySet<string>): Set<string> {
  const out = new Set(paths)
  for (const p of paths) {
    for (let i = p.lastIndexOf('/'); i > 0; i = p.lastIndexOf('/', i - 1)) {
      const dir = p.slice(0, i)
      if (out.has(dir)) break
      out.add(dir)
    }
  }
  return out
}

function eventFromResult(m: ResultMessage, s: DeltaStats | undefined): FileEvent {
  return {
    path: m.path,
    action: m.action as Action,
    ...(m.seed !== undefined && { seed: m.seed }),
    ...(m.similarity !== undefined && { similarity: m.similarity }),
    ...(m.conflictCopy !== undefined && { conflictCopy: m.conflictCopy }),
    ...(m.candidates !== undefined && { candidates: m.candidates }),
    ...(m.code !== undefined && { code: m.code }),
    ...(m.message !== undefined && { message: m.message }),
    ...(s !== undefined && { size: s.targetSize, copiedBytes: s.copiedBytes, literalBytes: s.literalBytes }),
  }
}
