import { compressFrame, decompressFrame } from '../compress/index.js'
import { DsyncError, isDsyncError, type ErrorCode } from '../errors.js'
import { FINGERPRINT_BYTES, fingerprintFromBytes, fingerprintToBytes, parseFileDigest } from '../hash/index.js'
import { METRIC_NAMES } from '../choices.js'
import { prependInPlace } from '../headroom.js'
import { requirePackage } from '../packages.js'
import type { Chunk, FileDigest, SketchScanResult } from '../types.js'
import {
  BATCHED_TYPES, LIMITS, OP_CODE, PROBE_KEY_BYTES, STATE_STATUS, SYNC_STEPS, WIRE_KIND, type WireFileEntry, type WireGroupPiece, type WireMessage, type WireOpEntry,
  type WireScan, type WireSessionOptions, type WireSimilarFile, type WireStateEntry,
} from '../../protocol/messages.js'
import { MAX_SHOWN_CANDIDATES, type ChangeStatus, type GroupPiece, type FileEntry, type Message, type MessageOf, type MessageTag, type SeedShown, type SessionOptions, type StateEntry, type SyncOp } from './messages.js'
import { WireFields, checkBytes, checkInt, checkNum, checkPath, checkStr, isPlainMap, typeName } from './wire-fields.js'

/**
 * The msgpack codec: domain `Message` ⇄ one binary frame. The only file that imports msgpackr.
 * `decode` validates every field (types, sizes, safe relative paths) and throws nothing but
 * DsyncError('BAD_MESSAGE'); unknown keys are ignored so a newer peer may add optional ones.
 */

// No records, structured clones or extra types: the wire is plain maps, arrays, strings,
// numbers, booleans, nil and bin. 64-bit integers decode as (possibly inexact) numbers, which
// the safe-integer checks then refuse, instead of BigInts.
// msgpackr 1.x, the line lmdb requires (^1.11): with 2.x, every process loaded two copies, each
// with its native extractor. A tiny push, 6 pairs in turns (2026-11-27): 373 → 350 ms median.
// The wire is the same msgpack either way.
const { Packr } = requirePackage('msgpackr') as typeof import('msgpackr')
const packr = new Packr({
  useRecords: false,
  structuredClone: false,
  moreTypes: false,
  variableMapSize: true,
  mapsAsObjects: true,
  int64AsType: 'number',
})

const U32_MAX = 0xffff_ffff
const DIGEST_BYTES = 32
const CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/
const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/
const KIND_BY_WIRE = ['file', 'dir', 'symlink'] as const
const STATUS_BY_WIRE = ['same', 'changed', 'new', 'deleted'] as const satisfies readonly ChangeStatus[]
const OP_BY_WIRE = ['send', 'move', 'delete', 'conflictCopy', 'clear'] as const
const REPLICA_PATTERN = /^[0-9a-f]{32}$/

/** Every error code dsync defines: a received `error` with one of these keeps its code. */
export const KNOWN_ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'USAGE', 'NOT_FOUND', 'NOT_A_FILE', 'EMPTY_FILE', 'IO', 'BAD_DATA', 'DIGEST_MISMATCH', 'UNSAFE_PATH',
  'AUTH_FAILED', 'PROTOCOL_VERSION', 'BAD_MESSAGE', 'NETWORK', 'CHANGED_ON_RECEIVER', 'SOURCE_CHANGED', 'PARTIAL',
  'ABORTED', 'INTERNAL', 'BUSY',
])

/** How one message type goes to the wire and back. `toWire` may assume a well-typed message. */
interface MessageCodec<T extends MessageTag> {
  toWire(m: MessageOf<T>): WireMessage
  fromWire(f: WireFields): MessageOf<T>
}

type CodecTable = { readonly [T in MessageTag]: MessageCodec<T> }

const CODECS: CodecTable = {
  hello: {
    toWire: (m) => ({ t: 'hello', versions: m.versions, server: m.server, challenge: m.challenge }),
    fromWire: (f) => ({
      t: 'hello',
      versions: f.array('versions', LIMITS.maxVersions).map((v, i) => checkInt(f, `versions[${i}]`, v, 1, U32_MAX)),
      server: f.str('server', LIMITS.maxTextBytes),
      challenge: f.bytes('challenge', { exact: LIMITS.challengeBytes }),
    }),
  },
  auth: {
    toWire: (m) => ({
      t: 'auth', version: m.version, mac: m.mac, challenge: m.challenge, role: m.role, subdir: m.subdir,
      options: optionsToWire(m.options),
    }),
    fromWire: (f) => ({
      t: 'auth',
      version: f.int('version', 1, U32_MAX),
      mac: f.bytes('mac', { max: LIMITS.macBytes }),
      challenge: f.bytes('challenge', { exact: LIMITS.challengeBytes }),
      role: f.oneOf('role', ['push', 'pull', 'sync', 'query']),
      subdir: f.path('subdir', true),
      options: optionsFromWire(f.map('options')),
    }),
  },
  welcome: {
    toWire: (m) => ({ t: 'welcome', version: m.version, mac: m.mac }),
    fromWire: (f) => ({ t: 'welcome', version: f.int('version', 1, U32_MAX), mac: f.bytes('mac', { max: LIMITS.macBytes }) }),
  },
  files: {
    toWire: (m) => ({ t: 'files', ...packList('files', m.entries.map(entryToWire)) }),
    fromWire: (f) => ({ t: 'files', entries: unpackList(f).map((e, i) => entryFromWire(f, i, e)) }),
  },
  filesEnd: {
    toWire: () => ({ t: 'filesEnd' }),
    fromWire: () => ({ t: 'filesEnd' }),
  },
  summary: {
    toWire: (m) => {
      const n = LIMITS.summaryHashBytes
      if (m.dirs.length === 0 || m.dirs.length > LIMITS.maxFilesPerMessage) throw internal(`'summary' with ${m.dirs.length} directories; send 1 to ${LIMITS.maxFilesPerMessage}`)
      const hashes = Buffer.alloc(m.dirs.length * n)
      m.dirs.forEach((d, i) => {
        if (d.hash.length !== n) throw internal(`'summary' hash of ${d.hash.length} bytes; send ${n}`)
        hashes.set(d.hash, i * n)
      })
      return { t: 'summary', dirs: m.dirs.map((d) => d.path), hashes }
    },
    fromWire: (f) => {
      const n = LIMITS.summaryHashBytes
      const paths = f.array('dirs', LIMITS.maxFilesPerMessage).map((p, i) => checkPath(f, `dirs[${i}]`, p, true))
      if (paths.length === 0) throw f.bad('dirs', 'is empty')
      const hashes = f.bytes('hashes', { exact: paths.length * n })
      return { t: 'summary', dirs: paths.map((path, i) => ({ path, hash: hashes.subarray(i * n, (i + 1) * n) })) }
    },
  },
  summaryWant: {
    toWire: (m) => {
      if (m.paths.length > LIMITS.maxFilesPerMessage) throw internal(`'summaryWant' with ${m.paths.length} paths; send at most ${LIMITS.maxFilesPerMessage}`)
      return { t: 'summaryWant', paths: [...m.paths] }
    },
    fromWire: (f) => ({ t: 'summaryWant', paths: f.array('paths', LIMITS.maxFilesPerMessage).map((p, i) => checkPath(f, `paths[${i}]`, p, true)) }),
  },
  listRoom: {
    toWire: (m) => ({ t: 'listRoom', upTo: m.upTo }),
    fromWire: (f) => ({ t: 'listRoom', upTo: f.int('upTo', 0, Number.MAX_SAFE_INTEGER) }),
  },
  want: {
    toWire: (m) => ({
      t: 'want', id: m.id, path: m.path, ...(m.whole === true && { whole: true }), ...(m.probe === true && { probe: true }), ...(m.digest === true && { digest: true }),
      ...(m.direct === true && { direct: true }),
    }),
    fromWire: (f) => ({
      t: 'want', id: f.int('id', 0, U32_MAX), path: f.path('path'),
      ...(f.has('whole') && f.bool('whole') && { whole: true }),
      ...(f.has('probe') && f.bool('probe') && { probe: true }),
      ...(f.has('digest') && f.bool('digest') && { digest: true }),
      ...(f.has('direct') && f.bool('direct') && { direct: true }),
    }),
  },
  probe: {
    toWire: (m) => {
      if (m.keys.length % PROBE_KEY_BYTES !== 0 || m.keys.length > LIMITS.maxProbeKeys * PROBE_KEY_BYTES) {
        throw internal(`'probe' with ${m.keys.length} bytes of keys; send whole ${PROBE_KEY_BYTES}-byte keys, at most ${LIMITS.maxProbeKeys}`)
      }
      if (m.anchors !== undefined && m.anchors.length > LIMITS.maxProbeKeys) throw internal(`'probe' with ${m.anchors.length} anchors; send at most ${LIMITS.maxProbeKeys}`)
      let anchors: Buffer | undefined
      if (m.anchors !== undefined) {
        anchors = Buffer.alloc(m.anchors.length * PROBE_KEY_BYTES)
        m.anchors.forEach((k, i) => anchors!.writeUInt32LE(k, i * PROBE_KEY_BYTES))
      }
      return { t: 'probe', id: m.id, size: m.size, keys: m.keys, ...(m.digest !== undefined && { digest: Buffer.from(m.digest, 'hex') }), ...(anchors !== undefined && { anchors }) }
    },
    fromWire: (f) => {
      const keys = f.bytes('keys', { max: LIMITS.maxProbeKeys * PROBE_KEY_BYTES })
      if (keys.length % PROBE_KEY_BYTES !== 0) throw f.bad('keys', `is ${keys.length} bytes, not whole ${PROBE_KEY_BYTES}-byte keys`)
      const digest = optionalDigest(f)
      const packed = f.has('anchors') && f.raw('anchors') !== null ? f.bytes('anchors', { max: LIMITS.maxProbeKeys * PROBE_KEY_BYTES }) : undefined
      if (packed !== undefined && packed.length % PROBE_KEY_BYTES !== 0) throw f.bad('anchors', `is ${packed.length} bytes, not whole ${PROBE_KEY_BYTES}-byte keys`)
      const view = packed === undefined ? undefined : Buffer.from(packed.buffer, packed.byteOffset, packed.length)
      const anchors = view === undefined ? undefined : Array.from({ length: view.length / PROBE_KEY_BYTES }, (_, i) => view.readUInt32LE(i * PROBE_KEY_BYTES))
      return {
        t: 'probe', id: f.int('id', 0, U32_MAX), size: f.int('size', 0, Number.MAX_SAFE_INTEGER), keys, ...(digest !== undefined && { digest }), ...(anchors !== undefined && { anchors }),
      }
    },
  },
  chunksWant: {
    toWire: (m) => ({ t: 'chunksWant', id: m.id }),
    fromWire: (f) => ({ t: 'chunksWant', id: f.int('id', 0, U32_MAX) }),
  },
  wholeWant: {
    toWire: (m) => ({ t: 'wholeWant', id: m.id }),
    fromWire: (f) => ({ t: 'wholeWant', id: f.int('id', 0, U32_MAX) }),
  },
  chunks: {
    toWire: chunksToWire,
    fromWire: chunksFromWire,
  },
  plan: {
    toWire: (m) => ({
      t: 'plan', id: m.id, method: m.method, seed: m.seed, similarity: m.similarity, signature: m.signature,
      ...(m.refine === true && { refine: true }),
      ...(m.ends === true && { ends: true }),
    }),
    fromWire: (f) => ({
      t: 'plan',
      id: f.int('id', 0, U32_MAX),
      method: f.oneOf('method', ['delta', 'whole']),
      seed: f.raw('seed') === null ? null : f.path('seed'),
      similarity: f.num('similarity', 0, 1),
      signature: f.raw('signature') === null ? null : f.bytes('signature', { max: LIMITS.maxSignatureBytes }),
      ...(f.has('refine') && f.bool('refine') && { refine: true }),
      ...(f.has('ends') && f.bool('ends') && { ends: true }),
    }),
  },
  matches: {
    toWire: (m) => ({ t: 'matches', id: m.id, list: m.list }),
    fromWire: (f) => ({ t: 'matches', id: f.int('id', 0, U32_MAX), list: f.bytes('list', { max: LIMITS.maxSignatureBytes }) }),
  },
  refine: {
    toWire: (m) => ({ t: 'refine', id: m.id, signature: m.signature, ...(m.whole === true && { whole: true }), ...(m.cancel === true && { cancel: true }) }),
    fromWire: (f) => ({
      t: 'refine', id: f.int('id', 0, U32_MAX), signature: f.raw('signature') === null ? null : f.bytes('signature', { max: LIMITS.maxSignatureBytes }),
      ...(f.has('whole') && f.bool('whole') && { whole: true }),
      ...(f.has('cancel') && f.bool('cancel') && { cancel: true }),
    }),
  },
  data: {
    toWire: (m) => {
      if (m.bytes.length > LIMITS.maxDataBytes) {
        throw internal(`'data' of ${m.bytes.length} bytes; send at most ${LIMITS.maxDataBytes} per message`)
      }
      return { t: 'data', id: m.id, bytes: m.bytes }
    },
    fromWire: (f) => ({ t: 'data', id: f.int('id', 0, U32_MAX), bytes: f.bytes('bytes', { max: LIMITS.maxDataBytes }) }),
  },
  dataEnd: {
    toWire: (m) => ({ t: 'dataEnd', id: m.id }),
    fromWire: (f) => ({ t: 'dataEnd', id: f.int('id', 0, U32_MAX) }),
  },
  bundle: {
    toWire: (m) => {
      const n = m.streams.length
      const sum = m.streams.reduce((a, b) => a + b.size, 0)
      if (n === 0 || n > LIMITS.maxBundleFiles || sum !== m.raw || m.raw > LIMITS.maxBundleBytes || m.z.length > m.raw) {
        throw internal(`'bundle' of ${n} files, ${sum} bytes listed, raw ${m.raw}, ${m.z.length} packed; send 1–${LIMITS.maxBundleFiles} files of at most ${LIMITS.maxBundleBytes} bytes, packed no larger`)
      }
      if (m.dict > LIMITS.maxBundleHistoryBytes) throw internal(`'bundle' with a ${m.dict}-byte dictionary; at most ${LIMITS.maxBundleHistoryBytes}`)
      return { t: 'bundle', ids: m.streams.map((b) => b.id), sizes: m.streams.map((b) => b.size), codec: m.codec, raw: m.raw, z: m.z, ...(m.dict > 0 && { dict: m.dict }) }
    },
    fromWire: (f) => {
      const ids = f.array('ids', LIMITS.maxBundleFiles)
      const sizes = f.array('sizes', LIMITS.maxBundleFiles)
      if (ids.length === 0) throw f.bad('ids', 'is empty; a bundle holds at least one file')
      if (sizes.length !== ids.length) throw f.bad('sizes', `has ${sizes.length} items for ${ids.length} ids`)
      const raw = f.int('raw', 0, LIMITS.maxBundleBytes)
      const streams = ids.map((id, i) => ({ id: checkInt(f, `ids[${i}]`, id, 0, U32_MAX), size: checkInt(f, `sizes[${i}]`, sizes[i], 1, raw) }))
      if (new Set(streams.map((b) => b.id)).size !== streams.length) throw f.bad('ids', 'names a file twice')
      const sum = streams.reduce((a, b) => a + b.size, 0)
      if (sum !== raw) throw f.bad('sizes', `add up to ${sum} bytes, not raw (${raw})`)
      // Never larger than raw: a sender stores a frame that would not shrink (compressFrame).
      const dict = f.has('dict') ? f.int('dict', 0, LIMITS.maxBundleHistoryBytes) : 0
      return { t: 'bundle', streams, codec: f.int('codec', 0, 255), raw, z: f.bytes('z', { max: raw }), dict }
    },
  },

  result: {
    toWire: (m) => ({
      t: 'result', id: m.id, path: m.path, action: m.action, ok: m.ok,
      ...(m.code === undefined ? {} : { code: m.code }),
      ...(m.message === undefined ? {} : { message: m.message }),
      ...(m.seed === undefined ? {} : { seed: m.seed }),
      ...(m.similarity === undefined ? {} : { similarity: m.similarity }),
      ...(m.conflictCopy === undefined ? {} : { conflictCopy: m.conflictCopy }),
      ...(m.candidates === undefined ? {} : { candidates: m.candidates.map((c) => [c.path, c.similarity]) }),
    }),
    fromWire: (f) => ({
      t: 'result',
      id: f.int('id', 0, U32_MAX),
      path: f.path('path'),
      action: f.str('action', 64, NAME_PATTERN),
      ok: f.bool('ok'),
      ...(f.has('code') ? { code: f.str('code', 64, CODE_PATTERN) } : {}),
      ...(f.has('message') ? { message: f.str('message', LIMITS.maxTextBytes) } : {}),
      ...(f.has('seed') ? { seed: f.path('seed') } : {}),
      ...(f.has('similarity') ? { similarity: f.num('similarity', 0, 1) } : {}),
      ...(f.has('conflictCopy') ? { conflictCopy: f.path('conflictCopy') } : {}),
      ...(f.has('candidates') ? { candidates: candidatesFromWire(f) } : {}),
    }),
  },
  done: {
    toWire: (m) => ({ t: 'done', summary: m.summary }),
    fromWire: (f) => ({ t: 'done', summary: summaryFromWire(f) }),
  },
  notice: {
    toWire: (m) => ({
      t: 'notice', message: m.message,
      ...(m.path === undefined ? {} : { path: m.path }),
      ...(m.code === undefined ? {} : { code: m.code }),
    }),
    fromWire: (f) => ({
      t: 'notice',
      message: f.str('message', LIMITS.maxTextBytes),
      ...(f.has('path') ? { path: f.path('path') } : {}),
      ...(f.has('code') ? { code: f.str('code', 64, CODE_PATTERN) } : {}),
    }),
  },
  error: {
    toWire: (m) => ({ t: 'error', code: m.code, message: m.message }),
    fromWire: (f) => ({ t: 'error', code: f.str('code', 64, CODE_PATTERN), message: f.str('message', LIMITS.maxTextBytes) }),
  },
  state: {
    toWire: (m) => ({ t: 'state', ...packList('state', m.entries.map((e): WireStateEntry => [...entryToWire(e), STATE_STATUS[e.status]])) }),
    fromWire: (f) => ({
      t: 'state',
      entries: unpackList(f).map((raw, i): StateEntry => {
        const entry = entryFromWire(f, i, raw)
        const status = STATUS_BY_WIRE[checkInt(f, `entries[${i}].status`, (raw as unknown[])[6], 0, STATUS_BY_WIRE.length - 1)]!
        return { ...entry, status }
      }),
    }),
  },
  stateEnd: {
    toWire: (m) => ({ t: 'stateEnd', replica: m.replica, machine: m.machine }),
    fromWire: (f) => ({ t: 'stateEnd', replica: f.str('replica', 32, REPLICA_PATTERN), machine: f.str('machine', 64, NAME_PATTERN) }),
  },
  digests: {
    toWire: (m) => {
      if (m.paths.length > LIMITS.maxFilesPerMessage) throw internal(`'digests' with ${m.paths.length} paths; send at most ${LIMITS.maxFilesPerMessage}`)
      return {
        t: 'digests', paths: m.paths,
        ...(m.digests !== undefined && { digests: m.digests.map((d) => (d === undefined ? null : Buffer.from(d, 'hex'))) }),
      }
    },
    fromWire: (f) => {
      const paths = f.array('paths', LIMITS.maxFilesPerMessage).map((p, i) => checkPath(f, `paths[${i}]`, p, false))
      if (!f.has('digests')) return { t: 'digests', paths }
      const raw = f.array('digests', LIMITS.maxFilesPerMessage)
      if (raw.length !== paths.length) throw f.bad('digests', `has ${raw.length} items for ${paths.length} paths`)
      const digests = raw.map((d, i) => {
        if (d === null) return undefined
        const digest = parseFileDigest(Buffer.from(checkBytes(f, `digests[${i}]`, d, { exact: DIGEST_BYTES })).toString('hex'))
        if (digest === undefined) throw f.bad(`digests[${i}]`, 'is not a SHA-256 digest')
        return digest
      })
      return { t: 'digests', paths, digests }
    },
  },
  ops: {
    toWire: (m) => ({ t: 'ops', ...packList('ops', m.ops.map((o): WireOpEntry => [OP_CODE[o.op], o.path, 'to' in o ? o.to : null])) }),
    fromWire: (f) => ({ t: 'ops', ops: unpackList(f).map((raw, i) => opFromWire(f, i, raw)) }),
  },
  step: {
    toWire: (m) => ({ t: 'step', name: m.name }),
    fromWire: (f) => ({ t: 'step', name: f.oneOf('name', SYNC_STEPS) }),
  },
  sketchWant: {
    toWire: (m) => ({ t: 'sketchWant', id: m.id }),
    fromWire: (f) => ({ t: 'sketchWant', id: f.int('id', 0, U32_MAX) }),
  },
  batch: {
    toWire: (m) => {
      if (m.messages.some((x) => x.t === 'batch')) throw internal("a 'batch' inside a 'batch'")
      return { t: 'batch', ...packList('batch', m.messages.map(encode), BATCH_LIST) }
    },
    fromWire: (f) => {
      const frames = unpackList(f, BATCH_LIST)
      if (frames.length < 2) throw f.bad('z', `holds ${frames.length} messages; a batch holds at least 2`)
      const messages = frames.map((frame, i) => {
        const bytes = checkBytes(f, `z[${i}]`, frame, { max: LIMITS.maxBatchBytes })
        const m = decode(bytes)
        // Only small messages: a `files` list in a batch unpacks 4 MiB from ~400 bytes, and a
        // batch of them would hold gigabytes (one crashed a server in review).
        if (!BATCHED_TYPES.includes(m.t)) throw f.bad(`z[${i}]`, `is a '${m.t}', which travels alone, never in a batch`)
        return m
      })
      return { t: 'batch', messages }
    },
  },
  sketch: {
    toWire: (m) => ({ t: 'sketch', id: m.id, sketch: m.sketch }),
    fromWire: (f) => ({ t: 'sketch', id: f.int('id', 0, U32_MAX), sketch: f.raw('sketch') === null ? null : f.bytes('sketch', { max: LIMITS.maxSketchBytes }) }),
  },
  query: {
    toWire: ({ query: q }) => ({
      t: 'query', kind: q.kind, metric: q.metric, threshold: q.threshold, scan: q.scan,
      ...(q.kind === 'similar' && { top: q.top, sketch: q.sketch }),
    }),
    fromWire: (f) => {
      const kind = f.oneOf('kind', ['similar', 'groups'])
      const common = { metric: f.oneOf('metric', METRIC_NAMES), threshold: f.num('threshold', 0, 1), scan: f.bool('scan') }
      if (kind === 'groups') return { t: 'query', query: { kind, ...common } }
      return { t: 'query', query: { kind, ...common, top: f.int('top', 1, LIMITS.maxQueryTop), sketch: f.bytes('sketch', { max: LIMITS.maxSketchBytes }) } }
    },
  },
  similarFound: {
    toWire: (m) => {
      if (m.files.length > LIMITS.maxQueryTop) throw internal(`'similarFound' with ${m.files.length} files; send at most ${LIMITS.maxQueryTop}`)
      return {
        t: 'similarFound',
        files: m.files.map((x): WireSimilarFile => [x.path, x.size, x.jaccard, x.dice, x.lcs, x.containment, x.containedIn, x.errorBound]),
        ...(m.scan && { scan: scanToWire(m.scan) }),
      }
    },
    fromWire: (f) => ({
      t: 'similarFound',
      files: f.array('files', LIMITS.maxQueryTop).map((raw, i) => {
        const at = `files[${i}]`
        if (!Array.isArray(raw) || raw.length !== 8) throw f.bad(at, 'must be [path, size, jaccard, dice, lcs, containment, containedIn, errorBound]')
        const [path, size, ...shares] = raw as unknown[]
        const [jaccard, dice, lcs, containment, containedIn, errorBound] = shares.map((v, k) => checkNum(f, `${at}[${k + 2}]`, v, 0, 1))
        return { path: checkPath(f, `${at}.path`, path, false), size: checkInt(f, `${at}.size`, size, 0, Number.MAX_SAFE_INTEGER), jaccard: jaccard!, dice: dice!, lcs: lcs!, containment: containment!, containedIn: containedIn!, errorBound: errorBound! }
      }),
      ...(f.has('scan') && { scan: scanFromWire(f) }),
    }),
  },
  groupsFound: {
    toWire: (m) => ({
      t: 'groupsFound',
      ...packList('groupsFound', m.pieces.map((p): WireGroupPiece => [p.cont, p.files.map((x) => [x.path, x.size, x.similarity]), p.pairs.map((x) => [x.a, x.b, x.similarity])])),
      ...(m.more && { more: true }),
      ...(m.scan && { scan: scanToWire(m.scan) }),
    }),
    fromWire: (f) => ({
      t: 'groupsFound',
      pieces: unpackList(f).map((raw, i) => groupPieceFromWire(f, `z[${i}]`, raw)),
      more: f.has('more') && f.bool('more'),
      ...(f.has('scan') && { scan: scanFromWire(f) }),
    }),
  },
}

function scanToWire(s: SketchScanResult): WireScan {
  return [s.files, s.filesRead, s.bytesRead, s.removed]
}

function scanFromWire(f: WireFields): SketchScanResult {
  const raw = f.array('scan', 4)
  if (raw.length !== 4) throw f.bad('scan', 'must be [files, filesRead, bytesRead, removed]')
  const [files, filesRead, bytesRead, removed] = raw.map((v, i) => checkInt(f, `scan[${i}]`, v, 0, Number.MAX_SAFE_INTEGER))
  return { files: files!, filesRead: filesRead!, bytesRead: bytesRead!, removed: removed! }
}

/** One WireGroupPiece: indexes are checked against the group by the client, which has its pieces. */
function groupPieceFromWire(f: WireFields, at: string, raw: unknown): GroupPiece {
  if (!Array.isArray(raw) || raw.length !== 3) throw f.bad(at, 'must be [cont, files, pairs]')
  const [cont, files, pairs] = raw as unknown[]
  if (typeof cont !== 'boolean') throw f.bad(`${at}.cont`, `must be a boolean, got ${typeName(cont)}`)
  if (!Array.isArray(files) || !Array.isArray(pairs)) throw f.bad(at, 'files and pairs must be arrays')
  if (files.length + pairs.length > LIMITS.maxGroupRows) throw f.bad(at, `has more than ${LIMITS.maxGroupRows} files and pairs`)
  return {
    cont,
    files: files.map((x: unknown, k) => {
      if (!Array.isArray(x) || x.length !== 3) throw f.bad(`${at}.files[${k}]`, 'must be [path, size, similarity]')
      return { path: checkPath(f, `${at}.files[${k}]`, x[0], false), size: checkInt(f, `${at}.files[${k}].size`, x[1], 0, Number.MAX_SAFE_INTEGER), similarity: checkNum(f, `${at}.files[${k}].similarity`, x[2], 0, 1) }
    }),
    pairs: pairs.map((x: unknown, k) => {
      if (!Array.isArray(x) || x.length !== 3) throw f.bad(`${at}.pairs[${k}]`, 'must be [a, b, similarity]')
      return {
        a: checkInt(f, `${at}.pairs[${k}].a`, x[0], 0, LIMITS.maxGroupRows - 1),
        b: checkInt(f, `${at}.pairs[${k}].b`, x[1], 0, LIMITS.maxGroupRows - 1),
        similarity: checkNum(f, `${at}.pairs[${k}].similarity`, x[2], 0, 1),
      }
    }),
  }
}

/** How long a list may be: entries of `files`, `state`, `ops` by default; a `batch`'s messages. */
interface ListLimits {
  readonly items: number
  readonly bytes: number
}
const FILE_LIST: ListLimits = { items: LIMITS.maxFilesPerMessage, bytes: LIMITS.maxFileListBytes }
const BATCH_LIST: ListLimits = { items: LIMITS.maxBatchMessages, bytes: LIMITS.maxBatchBytes }

/** A list message's payload: the msgpack array of `items`, compressed as one frame. */
function packList(tag: string, items: readonly unknown[], limits = FILE_LIST): { codec: number; raw: number; z: Uint8Array } {
  if (items.length > limits.items) throw internal(`'${tag}' with ${items.length} entries; send at most ${limits.items} per message`)
  const packed = packr.pack(items)
  if (packed.length > limits.bytes) throw internal(`'${tag}' list of ${packed.length} bytes; send fewer entries per message`)
  const frame = compressFrame(packed)
  return { codec: frame.codec, raw: packed.length, z: frame.data }
}

/** The items of a list message (`files`, `state`, `ops`, `batch`), still unchecked one by one. */
function unpackList(f: WireFields, limits = FILE_LIST): readonly unknown[] {
  const raw = f.int('raw', 0, limits.bytes)
  const codec = f.int('codec', 0, 255)
  const z = f.bytes('z', { max: LIMITS.maxFrameBytes })
  let packed: Uint8Array
  try {
    packed = decompressFrame(codec, z, raw)
  } catch (err) {
    if (isDsyncError(err, 'INTERNAL')) throw err // this side's bug, not the peer's message
    throw f.bad('z', `does not decompress to ${raw} bytes with codec ${codec}`, err)
  }
  let list: unknown
  try {
    list = packr.unpack(packed)
  } catch (err) {
    throw f.bad('z', 'does not hold a msgpack entry list', err)
  }
  if (!Array.isArray(list)) throw f.bad('z', `must hold an array of entries, got ${typeName(list)}`)
  if (list.length > limits.items) throw f.bad('z', `holds ${list.length} entries, more than ${limits.items}`)
  return list
}

function opFromWire(f: WireFields, i: number, raw: unknown): SyncOp {
  const at = `ops[${i}]`
  if (!Array.isArray(raw) || raw.length < 3) throw f.bad(at, 'must be an array of 3 fields [op, path, to]')
  const [code, path, to] = raw as unknown[]
  const op = OP_BY_WIRE[checkInt(f, `${at}.op`, code, 0, OP_BY_WIRE.length - 1)]!
  const p = checkPath(f, `${at}.path`, path, false)
  if (op === 'send' || op === 'delete' || op === 'clear') return { op, path: p }
  return { op, path: p, to: checkPath(f, `${at}.to`, to, false) }
}

/** Encodes a message as one frame payload (a Uint8Array, maybe a view into a larger buffer).
 *  The result stays valid after later calls.
 *  Throws DsyncError('INTERNAL') for a message over a protocol limit (a bug in the caller). */
export function encode(msg: Message): Uint8Array {
  const codec = CODECS[msg.t] as MessageCodec<MessageTag> | undefined
  if (codec === undefined) throw internal(`cannot encode unknown message type ${JSON.stringify(msg.t)}`)
  const wire = codec.toWire(msg)
  if (wire.t === 'data') return encodeWithBin({ t: 'data', id: wire.id }, 'bytes', wire.bytes)
  if (wire.t === 'bundle') {
    const { z, ...rest } = wire
    return encodeWithBin(rest, 'z', z)
  }
  return packr.pack(wire)
}

/** The keys encodeWithBin writes, packed once (fixstr; copied out of msgpackr's buffer). */
const BIN_KEYS = { bytes: packr.pack('bytes').slice(), z: packr.pack('z').slice() }

/**
 * `data` is the bulk of every transfer and `bundle` of a first push of small files, so they are
 * written here: the map msgpackr writes for the other fields (`rest`) with one more entry, `key` as a
 * bin 32, and the payload after it: in place when the payload has room before it (a file read
 * to be sent whole: headroom.ts), the frame then a view into the payload's buffer; else copied
 * once into a buffer of the exact size. packr.pack grew and copied its own buffer for each
 * 1 MiB payload: 0.53 of the client's 3.9 CPU s pushing a new 256 MiB file; 10 new files of
 * 1 MiB in bundles, ~70 ms of the client's ~0.8 CPU s (--cpu-prof). Any msgpack decoder reads
 * it as packr.pack's output (test/net/codec.ts checks both ways).
 */
function encodeWithBin(rest: { readonly t: string; readonly [field: string]: unknown }, key: keyof typeof BIN_KEYS, bytes: Uint8Array): Uint8Array {
  const head = packr.pack(rest)
  // A fixmap (under 15 entries, so one more fits) whose entries follow its first byte.
  if ((head[0]! & 0xf0) !== 0x80 || (head[0]! & 0x0f) >= 15) throw internal(`msgpackr wrote the ${rest.t} header in an unexpected form`)
  const keyBytes = BIN_KEYS[key]
  const prefix = Buffer.allocUnsafe(head.length + keyBytes.length + 5)
  prefix.set(head, 0)
  prefix[0] = head[0]! + 1 // one more entry
  let at = head.length
  prefix.set(keyBytes, at)
  at += keyBytes.length
  prefix[at] = 0xc6 // bin 32
  prefix.writeUInt32BE(bytes.length, at + 1)
  // A file's bytes read to be sent whole: the header goes in the room before them (headroom.ts).
  const inPlace = prependInPlace(prefix, bytes)
  if (inPlace !== undefined) return inPlace
  const out = Buffer.allocUnsafe(prefix.length + bytes.length)
  out.set(prefix, 0)
  out.set(bytes, prefix.length)
  return out
}

/** Decodes and validates one frame payload. Throws only DsyncError('BAD_MESSAGE'), whose
 *  message says what was wrong (never echoing large input). */
export function decode(frame: Uint8Array): Message {
  let obj: unknown
  try {
    obj = packr.unpack(frame)
  } catch (err) {
    throw new DsyncError('BAD_MESSAGE', `undecodable message (${frame.length} bytes): not valid msgpack`, { cause: err })
  }
  if (!isPlainMap(obj)) throw new DsyncError('BAD_MESSAGE', `malformed message: must be a map, got ${typeName(obj)}`)
  const t = obj['t']
  if (typeof t !== 'string' || !Object.hasOwn(CODECS, t)) {
    const shown = typeof t === 'string' ? JSON.stringify(t.slice(0, 40)) : typeName(t)
    throw new DsyncError('BAD_MESSAGE', `unknown message type ${shown}`)
  }
  const codec = CODECS[t as MessageTag] as MessageCodec<MessageTag>
  try {
    return codec.fromWire(new WireFields(t, obj))
  } catch (err) {
    if (err instanceof DsyncError && err.code === 'BAD_MESSAGE') throw err
    // A validator tripping over something it did not expect is still the peer's bad input.
    const why = err instanceof Error ? `: ${err.message.slice(0, 200)}` : ''
    throw new DsyncError('BAD_MESSAGE', `malformed '${t}' message${why}`, { cause: err })
  }
}

function internal(message: string): DsyncError {
  return new DsyncError('INTERNAL', `protocol: ${message}`)
}

function optionsToWire(o: SessionOptions): WireSessionOptions {
  return {
    dryRun: o.dryRun, delete: o.delete, checksum: o.checksum, threshold: o.threshold, metric: o.metric, force: o.force,
    ...(o.exclude.length > 0 && { exclude: o.exclude }),
    ...(o.replica !== undefined && { replica: o.replica }),
    ...(o.machine !== undefined && { machine: o.machine }),
    ...(o.compressLevel !== undefined && { compressLevel: o.compressLevel }),
  }
}

function optionsFromWire(f: WireFields): SessionOptions {
  return {
    dryRun: f.bool('dryRun'),
    delete: f.bool('delete'),
    checksum: f.bool('checksum'),
    threshold: f.num('threshold', 0, 1),
    metric: f.str('metric', 64, NAME_PATTERN),
    force: f.bool('force'),
    exclude: f.has('exclude')
      ? f.array('exclude', LIMITS.maxExcludes).map((v, i) => checkStr(f, `exclude[${i}]`, v, LIMITS.maxPatternBytes))
      : [],
    ...(f.has('replica') && { replica: f.str('replica', 32, REPLICA_PATTERN) }),
    ...(f.has('machine') && { machine: f.str('machine', 64, NAME_PATTERN) }),
    ...(f.has('compressLevel') && { compressLevel: f.int('compressLevel', 1, 19) }),
  }
}

function entryToWire(e: FileEntry): WireFileEntry {
  const extra = e.kind === 'file' ? (e.digest === undefined ? null : Buffer.from(e.digest, 'hex'))
    : e.kind === 'symlink' ? (e.target ?? '') : null
  return [e.path, WIRE_KIND[e.kind], e.size, e.mtimeMs, e.mode, extra]
}

function entryFromWire(f: WireFields, i: number, raw: unknown): FileEntry {
  const at = `entries[${i}]`
  if (!Array.isArray(raw) || raw.length < 6) throw f.bad(at, 'must be an array of 6 fields [path, kind, size, mtimeMs, mode, extra]')
  const [path, kindCode, size, mtimeMs, mode, extra] = raw as unknown[]
  const kind = KIND_BY_WIRE[checkInt(f, `${at}.kind`, kindCode, 0, KIND_BY_WIRE.length - 1)]!
  const entry: FileEntry = {
    path: checkPath(f, `${at}.path`, path, false),
    kind,
    size: checkInt(f, `${at}.size`, size, 0, Number.MAX_SAFE_INTEGER),
    mtimeMs: checkFinite(f, `${at}.mtimeMs`, mtimeMs),
    mode: checkInt(f, `${at}.mode`, mode, 0, 0o7777),
  }
  if (kind === 'file' && extra !== null) {
    const hex = Buffer.from(checkBytes(f, `${at}.digest`, extra, { exact: DIGEST_BYTES })).toString('hex')
    const digest = parseFileDigest(hex)
    if (digest === undefined) throw f.bad(`${at}.digest`, 'is not a SHA-256 digest')
    entry.digest = digest
  } else if (kind === 'symlink') {
    const target = checkStr(f, `${at}.target`, extra, LIMITS.maxLinkTargetBytes)
    if (target === '' || target.includes('\0')) throw f.bad(`${at}.target`, 'must be a non-empty link target without NUL')
    entry.target = target
  } else if (extra !== null) {
    throw f.bad(`${at}.extra`, `must be nil for a ${kind}`)
  }
  return entry
}

function checkFinite(f: WireFields, field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw f.bad(field, `must be a finite number, got ${typeName(v)}`)
  return v
}

function chunksToWire(m: MessageOf<'chunks'>): WireMessage {
  const n = m.chunks.length
  if (n > LIMITS.maxChunksPerMessage) {
    throw internal(`'chunks' with ${n} chunks; send at most ${LIMITS.maxChunksPerMessage} per message, 'more' on all but the last`)
  }
  const lengths = new Uint8Array(4 * n)
  const view = new DataView(lengths.buffer)
  const fps = new Uint8Array(FINGERPRINT_BYTES * n)
  const offsets = m.sampled === true ? new Uint8Array(8 * n) : undefined
  const offsetView = offsets && new DataView(offsets.buffer)
  const base = n === 0 || m.sampled === true ? 0 : m.chunks[0]!.offset
  let next = base
  for (let i = 0; i < n; i++) {
    const c = m.chunks[i]!
    if (offsetView) {
      if (c.offset < next) throw internal(`'chunks' ${m.id}: sampled chunk ${i} at offset ${c.offset} overlaps the one before`)
      offsetView.setFloat64(8 * i, c.offset, true)
    } else if (c.offset !== next) throw internal(`'chunks' ${m.id}: chunk ${i} at offset ${c.offset}, expected ${next} (chunks must be contiguous)`)
    view.setUint32(4 * i, c.length, true)
    fingerprintToBytes(c.fp, fps, FINGERPRINT_BYTES * i)
    next = c.offset + c.length
  }
  return {
    t: 'chunks', id: m.id, size: m.size, base, lengths, fps,
    ...(offsets === undefined ? {} : { offsets }),
    ...(m.more === true ? { more: true } : {}),
    ...(m.digest === undefined ? {} : { digest: Buffer.from(m.digest, 'hex') }),
    ...(m.sketchable === true ? { sketchable: true } : {}),
    ...(m.refinable === true ? { refinable: true } : {}),
  }
}

function chunksFromWire(f: WireFields): MessageOf<'chunks'> {
  const id = f.int('id', 0, U32_MAX)
  const size = f.int('size', 0, Number.MAX_SAFE_INTEGER)
  const base = f.int('base', 0, Number.MAX_SAFE_INTEGER)
  const lengths = f.bytes('lengths', { max: 4 * LIMITS.maxChunksPerMessage })
  if (lengths.length % 4 !== 0) throw f.bad('lengths', 'must be 4 bytes per chunk')
  const n = lengths.length / 4
  const fps = f.bytes('fps', { exact: FINGERPRINT_BYTES * n })
  const offsets = f.has('offsets') ? f.bytes('offsets', { exact: 8 * n }) : undefined
  const view = new DataView(lengths.buffer, lengths.byteOffset, lengths.byteLength)
  const offsetView = offsets && new DataView(offsets.buffer, offsets.byteOffset, offsets.byteLength)
  const chunks: Chunk[] = new Array<Chunk>(n)
  let offset = base
  for (let i = 0; i < n; i++) {
    const length = view.getUint32(4 * i, true)
    if (length === 0 || length > LIMITS.maxChunkBytes) throw f.bad(`lengths[${i}]`, `must be in [1, ${LIMITS.maxChunkBytes}], got ${length}`)
    if (offsetView) {
      const at = offsetView.getFloat64(8 * i, true)
      if (!Number.isSafeInteger(at) || at < offset) throw f.bad(`offsets[${i}]`, 'must be whole, increasing and not overlap the chunk before')
      offset = at
    }
    chunks[i] = { offset, length, fp: fingerprintFromBytes(fps, FINGERPRINT_BYTES * i) }
    offset += length
  }
  if (offset > size) throw f.bad('lengths', `reach byte ${offset}, past the file's ${size} bytes`)
  const more = f.raw('more')
  if (more !== undefined && more !== null && typeof more !== 'boolean') throw f.bad('more', `must be a boolean, got ${typeName(more)}`)
  const digest = optionalDigest(f)
  const sketchable = f.raw('sketchable')
  if (sketchable !== undefined && sketchable !== null && typeof sketchable !== 'boolean') throw f.bad('sketchable', `must be a boolean, got ${typeName(sketchable)}`)
  return {
    t: 'chunks', id, size, chunks,
    ...(more === true ? { more: true } : {}),
    ...(digest !== undefined && { digest }),
    ...(offsets !== undefined && { sampled: true }),
    ...(sketchable === true && { sketchable: true }),
    ...(f.raw('refinable') === true && { refinable: true }),
  }
}

function summaryFromWire(f: WireFields): Record<string, number> {
  const m = f.map('summary')
  const keys = m.keys()
  if (keys.length > LIMITS.maxSummaryKeys) throw f.bad('summary', `has ${keys.length} keys, more than ${LIMITS.maxSummaryKeys}`)
  const out: Record<string, number> = {}
  for (const key of keys) {
    if (!NAME_PATTERN.test(key)) throw f.bad('summary', `key ${JSON.stringify(key.slice(0, 64))} is not a counter name`)
    out[key] = m.num(key, -Number.MAX_VALUE, Number.MAX_VALUE)
  }
  return out
}

/** `result.candidates`: at most MAX_SHOWN_CANDIDATES [path, similarity] pairs. */
function candidatesFromWire(f: WireFields): SeedShown[] {
  return f.array('candidates', MAX_SHOWN_CANDIDATES).map((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2) throw f.bad(`candidates[${i}]`, 'must be a [path, similarity] pair')
    return { path: checkPath(f, `candidates[${i}]`, pair[0], false), similarity: checkNum(f, `candidates[${i}].similarity`, pair[1], 0, 1) }
  })
}

/** An optional `digest` field: a file's SHA-256 as bin(32) (`chunks`, `probe`). */
function optionalDigest(f: WireFields): FileDigest | undefined {
  return f.has('digest') ? parseFileDigest(Buffer.from(f.bytes('digest', { exact: DIGEST_BYTES })).toString('hex')) : undefined
}
