import { DsyncError } from '../errors.js'
import { CLOSE, connectTransport, LIMITS, withIdleTimeout, type Channel, type GroupPiece, type IndexQuery, type Message } from '../net/index.js'
import { decodeSketch, encodeSketchWithin, type MetricName, type Sketch } from '../similarity/index.js'
import { findSimilar, groupSimilar, updateSketchIndex, type Store } from '../store/index.js'
import type { SimilarFile, SimilarGroup, SketchScanResult } from '../types.js'
import { sessionOptions } from './session.js'
import { SessionScope, sessionError } from './session-scope.js'

/**
 * The `query` role (PROTOCOL.md §4.10): `dsync similar FILE URL` and `dsync groups URL` ask a
 * served tree's similarity index, the one sync keeps, as they ask a local tree's. The client
 * sends one `query`; the server brings its index up to date (unless told not to), answers, and
 * the session ends.
 */

/** A `groupsFound` message holds at most this many files and pairs, and about this many bytes
 *  of paths: a frame of ~1 MiB unpacked, whatever the groups. */
const ROWS_PER_MESSAGE = 4096
const PATH_BYTES_PER_MESSAGE = 1 << 20

/** What the server answers a query with: the served tree, its store, the session's signal. */
interface QueryDeps {
  readonly root: string
  readonly store: Store
  readonly signal: AbortSignal
  /** a file the index update could not read (it is left out) */
  readonly onSkipped?: (err: DsyncError) => void
}

/**
 * The server's side: answers the session's one query on the tree at `root`. The session ends
 * with the client: reading goes on while the server scans and answers (the client says nothing
 * more), so a client that leaves stops the scan and frees the tree at once, and the channel's
 * idle timer keeps running while an answer waits on a client that stopped reading.
 */
export async function answerQuery(
  channel: Channel,
  deps: QueryDeps,
): Promise<SketchScanResult | undefined> {
  const inbox = channel.messages()[Symbol.asyncIterator]()
  const first = await inbox.next()
  if (first.done === true) throw new DsyncError('NETWORK', 'the client left before it asked its query')
  const msg = first.value
  if (msg.t !== 'query') {
    await inbox.return?.() // ends the reading (and the channel's idle timer) here
    throw new DsyncError('BAD_MESSAGE', `expected 'query' first in a query session, got '${msg.t}'`)
  }
  const scope = new SessionScope(deps.signal, (err) => channel.fail(sessionError(err, 'query')))
  scope.spawn(async () => {
    const next = await inbox.next()
    if (next.done === true) throw new DsyncError('NETWORK', 'the client left before the answer')
    throw new DsyncError('BAD_MESSAGE', `expected nothing after 'query', got '${next.value.t}'`)
  })
  try {
    return await answer(channel, msg.query, { ...deps, signal: scope.signal })
  } catch (err) {
    throw scope.failure ?? err
  }
}

async function answer(
  channel: Channel,
  q: IndexQuery,
  deps: QueryDeps,
): Promise<SketchScanResult | undefined> {
  const index = deps.store.sketchIndex()
  // A file the server cannot read is left out of the index, as locally (`dsync similar` warns).
  const onError = deps.onSkipped ?? ((): void => undefined)
  const update = async (): Promise<SketchScanResult | undefined> => (q.scan ? updateSketchIndex(deps.root, index, { signal: deps.signal, onError }) : undefined)
  if (q.kind === 'similar') {
    const sketch = querySketch(q.sketch)
    const scan = await update()
    const files = findSimilar(index, sketch, { metric: q.metric, threshold: q.threshold, top: Math.min(q.top, LIMITS.maxQueryTop) })
    await channel.send({ t: 'similarFound', files, ...(scan && { scan }) })
    return scan
  }
  const scan = await update()
  const groups = groupSimilar(index, { metric: q.metric, threshold: q.threshold }).map(withinLimits)
  const cut = groups.filter((g) => g.cut).length
  if (cut > 0) await channel.send({ t: 'notice', message: `${cut} group(s) too large to send whole were cut to their first ${LIMITS.maxGroupRows} files and pairs (or ${LIMITS.maxGroupPathBytes >> 20} MiB of paths); raise --threshold` })
  const messages = groupMessages(groups.map((g) => g.group))
  for (let i = 0; i < messages.length; i++) {
    deps.signal.throwIfAborted()
    await channel.send({ t: 'groupsFound', pieces: messages[i]!, more: i < messages.length - 1, ...(i === 0 && scan && { scan }) })
  }
  return scan
}

/** A group as the client may hold it (LIMITS.maxGroupRows, maxGroupPathBytes): its pairs
 *  dropped first, then its last files. */
function withinLimits(g: SimilarGroup): { group: SimilarGroup; cut: boolean } {
  let rows = 0
  let bytes = 0
  const files: SimilarGroup['files'][number][] = []
  for (const f of g.files) {
    bytes += Buffer.byteLength(f.path)
    if (++rows > LIMITS.maxGroupRows || bytes > LIMITS.maxGroupPathBytes) break
    files.push(f)
  }
  const kept = new Set(files.map((f) => f.path))
  const pairs = g.pairs.filter((p) => kept.has(p.a) && kept.has(p.b)).slice(0, Math.max(0, LIMITS.maxGroupRows - files.length))
  const cut = files.length < g.files.length || pairs.length < g.pairs.length
  return { group: cut ? { reference: g.reference, files, pairs } : g, cut }
}

function querySketch(bytes: Uint8Array): Sketch {
  try {
    return decodeSketch(bytes)
  } catch (err) {
    throw new DsyncError('BAD_MESSAGE', `malformed 'query' message: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  }
}

/**
 * Groups cut into `groupsFound` payloads: each group's files, then its pairs (by index into its
 * files, so every pair names files already sent), a group split across messages where a message
 * is full. Always at least one payload (maybe empty: no groups).
 */
export function groupMessages(groups: readonly SimilarGroup[]): GroupPiece[][] {
  const out: GroupPiece[][] = []
  let pieces: GroupPiece[] = []
  let rows = 0
  let bytes = 0
  let files: { path: string; size: number; similarity: number }[] = []
  let pairs: { a: number; b: number; similarity: number }[] = []
  let cont = false
  const closePiece = (): void => {
    if (files.length === 0 && pairs.length === 0) return
    pieces.push({ cont, files, pairs })
    files = []
    pairs = []
    cont = true
  }
  const room = (pathBytes: number): void => {
    if (rows < ROWS_PER_MESSAGE && bytes + pathBytes <= PATH_BYTES_PER_MESSAGE && pieces.length < LIMITS.maxFilesPerMessage - 1) return
    closePiece()
    out.push(pieces)
    pieces = []
    rows = 0
    bytes = 0
  }
  for (const g of groups) {
    cont = false
    const at = new Map(g.files.map((f, i) => [f.path, i]))
    for (const f of g.files) {
      const n = Buffer.byteLength(f.path)
      room(n)
      files.push(f)
      rows++
      bytes += n
    }
    for (const p of g.pairs) {
      room(0)
      pairs.push({ a: at.get(p.a)!, b: at.get(p.b)!, similarity: p.similarity })
      rows++
    }
    closePiece()
  }
  out.push(pieces)
  return out
}

/** The server answered wrong: BAD_MESSAGE, told to the server too. */
class BadAnswer extends DsyncError {
  constructor(message: string) {
    super('BAD_MESSAGE', message)
  }
}

/** The client's side: puts `groupsFound` pieces back together, a group at a time. */
export class GroupAssembler {
  #files: { path: string; size: number; similarity: number }[] = []
  #pairs: { a: string; b: string; similarity: number }[] = []
  #pathBytes = 0

  constructor(readonly onGroup: (g: SimilarGroup) => void) {}

  add(pieces: readonly GroupPiece[]): void {
    for (const p of pieces) {
      if (!p.cont) this.flush()
      else if (this.#files.length === 0) throw new BadAnswer("malformed 'groupsFound' message: a piece goes on with no group before it")
      if (this.#files.length + this.#pairs.length + p.files.length + p.pairs.length > LIMITS.maxGroupRows) {
        throw new BadAnswer(`malformed 'groupsFound' message: a group of more than ${LIMITS.maxGroupRows} files and pairs`)
      }
      for (const f of p.files) this.#pathBytes += Buffer.byteLength(f.path)
      if (this.#pathBytes > LIMITS.maxGroupPathBytes) {
        throw new BadAnswer(`malformed 'groupsFound' message: a group with more than ${LIMITS.maxGroupPathBytes >> 20} MiB of paths`)
      }
      this.#files.push(...p.files)
      for (const q of p.pairs) {
        const [a, b] = [this.#files[q.a], this.#files[q.b]]
        if (a === undefined || b === undefined) throw new BadAnswer(`malformed 'groupsFound' message: a pair names file ${Math.max(q.a, q.b)} of a group of ${this.#files.length}`)
        this.#pairs.push({ a: a.path, b: b.path, similarity: q.similarity })
      }
    }
  }

  /** Hands on the group being put together, if any. */
  flush(): void {
    if (this.#files.length === 0) return
    this.onGroup({ reference: this.#files[0]!.path, files: this.#files, pairs: this.#pairs })
    this.#files = []
    this.#pairs = []
    this.#pathBytes = 0
  }
}

/** How to reach the server (as for push and pull) and how to ask. */
export interface QueryOptions {
  readonly token: string | null
  readonly ca?: Uint8Array
  readonly rsh?: string
  readonly remoteDsync?: string
  readonly signal: AbortSignal
  /** end the session (NETWORK) when no byte moves either way this long; absent: never */
  readonly idleTimeoutMs?: number
  readonly onNotice?: (message: string) => void
  readonly metric: MetricName
  readonly threshold: number
  /** bring the server's index up to date first (default: yes) */
  readonly scan?: boolean
}

/** What a served tree answered. `scan`: what its index update did (absent with scan: false). */
export interface SimilarAnswer {
  readonly files: readonly SimilarFile[]
  readonly scan: SketchScanResult | undefined
}

/** `dsync similar FILE URL`: the files of the served tree most similar to the file of `sketch`. */
export async function askSimilar(url: string, sketch: Sketch, o: QueryOptions & { readonly top: number }): Promise<SimilarAnswer> {
  const top = Math.min(o.top, LIMITS.maxQueryTop)
  let answer: SimilarAnswer | undefined
  await runQuery(url, o, { kind: 'similar', sketch: encodeSketchWithin(sketch, 1, LIMITS.maxSketchBytes), metric: o.metric, threshold: o.threshold, top, scan: o.scan ?? true }, (msg) => {
    if (msg.t !== 'similarFound') return false
    if (msg.files.length > top) throw new BadAnswer(`the server sent ${msg.files.length} files; ${top} were asked for`)
    answer = { files: msg.files, scan: msg.scan }
    return true
  })
  return answer!
}

/** Where groups go as they come: `begin` once, with what the server's index update did, then
 *  each group (memory holds one group at a time). */
export interface GroupSink {
  begin(scan: SketchScanResult | undefined): void
  group(g: SimilarGroup): void
}

/** `dsync groups URL`: every group of similar files in the served tree, handed to `sink`. */
export async function askGroups(url: string, o: QueryOptions, sink: GroupSink): Promise<void> {
  const groups = new GroupAssembler((g) => sink.group(g))
  let first = true
  await runQuery(url, o, { kind: 'groups', metric: o.metric, threshold: o.threshold, scan: o.scan ?? true }, (msg) => {
    if (msg.t !== 'groupsFound') return false
    if (first) sink.begin(msg.scan)
    first = false
    groups.add(msg.pieces)
    if (msg.more) return 'more'
    groups.flush()
    return true
  })
}

/** One query session: sends `query`, hands each answer message to `take` (true: the answer is
 *  complete; 'more': it goes on; false: not an answer) and closes. */
async function runQuery(url: string, o: QueryOptions, query: IndexQuery, take: (msg: Message) => boolean | 'more'): Promise<void> {
  const transport = await connectTransport(url, {
    token: o.token, role: 'query', options: sessionOptions(), signal: o.signal,
    ...(o.ca && { ca: o.ca }), ...(o.rsh !== undefined && { rsh: o.rsh }), ...(o.remoteDsync !== undefined && { remoteDsync: o.remoteDsync }),
  })
  const channel = o.idleTimeoutMs ? withIdleTimeout(transport.channel, o.idleTimeoutMs) : transport.channel
  const stop = (): void => channel.close(CLOSE.goingAway, 'interrupted')
  o.signal.addEventListener('abort', stop, { once: true })
  let answered = false
  try {
    await channel.send({ t: 'query', query })
    for await (const msg of channel.messages()) {
      if (msg.t === 'notice') {
        o.onNotice?.(msg.message)
        continue
      }
      // What the server sent wrong is told to it (fail), as the roles do.
      const done = take(msg)
      if (done === false) throw new BadAnswer(`expected the answer to a '${query.kind}' query, got '${msg.t}'`)
      if (done === true) {
        answered = true
        break
      }
    }
    if (!answered) throw new DsyncError('NETWORK', `${url}: the server ended the session before it answered`)
    channel.close()
  } catch (err) {
    if (err instanceof BadAnswer) channel.fail(err)
    else channel.close(CLOSE.goingAway, 'client stopped')
    if (o.signal.aborted) throw new DsyncError('ABORTED', 'interrupted', { cause: err })
    throw err
  } finally {
    o.signal.removeEventListener('abort', stop)
    await transport.finished()
  }
}
