import fc from 'fast-check'
import { Packr } from 'msgpackr'
import t from 'tap'
import { DsyncError, isDsyncError } from '../../src/errors.js'
import { fingerprintFromBytes, parseFileDigest, type FileDigest } from '../../src/hash/index.js'
import { decode, encode, LIMITS, type FileEntry, type Message } from '../../src/net/index.js'
import type { Chunk } from '../../src/types.js'
import { MAX_QUERY_TOP, METRIC_NAMES } from '../../src/choices.js'
import { allocWithHeadroom } from '../../src/headroom.js'
import { randomBytes } from '../support/random.js'

const segment = fc.stringMatching(/^[a-zA-Z0-9_é -][a-zA-Z0-9._é -]{0,15}$/)
const relPath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'))
const u32 = fc.integer({ min: 0, max: 0xffff_ffff })
const unit = fc.double({ min: 0, max: 1, noNaN: true }).map((x) => (x === 0 ? 0 : x))
const bytes = (max: number) => fc.uint8Array({ maxLength: max })
const name = fc.stringMatching(/^[a-z][a-zA-Z0-9_.-]{0,20}$/)
const code = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,20}$/)
const text = fc.string({ maxLength: 200 })
const digest = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => parseFileDigest(Buffer.from(b).toString('hex')) as FileDigest)
const options = fc.record({
  dryRun: fc.boolean(), delete: fc.boolean(), checksum: fc.boolean(), threshold: unit, metric: name, force: fc.boolean(),
  exclude: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
})
const entry: fc.Arbitrary<FileEntry> = fc.oneof(
  fc.record({ path: relPath, kind: fc.constant('file' as const), size: fc.nat(), mtimeMs: fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => (x === 0 ? 0 : x)), mode: fc.integer({ min: 0, max: 0o7777 }), digest }),
  fc.record({ path: relPath, kind: fc.constant('file' as const), size: fc.nat(), mtimeMs: fc.nat(), mode: fc.integer({ min: 0, max: 0o7777 }) }),
  fc.record({ path: relPath, kind: fc.constant('dir' as const), size: fc.nat(), mtimeMs: fc.nat(), mode: fc.integer({ min: 0, max: 0o7777 }) }),
  fc.record({ path: relPath, kind: fc.constant('symlink' as const), size: fc.nat(), mtimeMs: fc.nat(), mode: fc.integer({ min: 0, max: 0o7777 }), target: fc.string({ minLength: 1, maxLength: 100 }).filter((s) => !s.includes('\0')) }),
)
const chunkList = fc
  .tuple(fc.nat({ max: 2 ** 40 }), fc.array(fc.tuple(fc.integer({ min: 1, max: LIMITS.maxChunkBytes }), fc.uint8Array({ minLength: 16, maxLength: 16 })), { maxLength: 50 }))
  .map(([base, parts]) => {
    let offset = base
    return parts.map(([length, fp]): Chunk => {
      const c = { offset, length, fp: fingerprintFromBytes(fp) }
      offset += length
      return c
    })
  })

/** Where a chunk list ends (0 when empty): the least file size it can describe. */
function listEnd(chunks: readonly Chunk[]): number {
  const last = chunks[chunks.length - 1]
  return last === undefined ? 0 : last.offset + last.length
}

/** One arbitrary per message type: adding a message type means adding a line here. */
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ t: fc.constant('hello' as const), versions: fc.array(fc.integer({ min: 1, max: 1000 }), { maxLength: 5 }), server: text, challenge: fc.uint8Array({ minLength: 32, maxLength: 32 }) }),
  fc.record({
    t: fc.constant('auth' as const), version: fc.integer({ min: 1, max: 1000 }), mac: fc.uint8Array({ maxLength: 32 }),
    challenge: fc.uint8Array({ minLength: 32, maxLength: 32 }), role: fc.constantFrom('push' as const, 'pull' as const),
    subdir: fc.oneof(fc.constant(''), relPath), options,
  }),
  fc.record({ t: fc.constant('welcome' as const), version: fc.integer({ min: 1, max: 1000 }), mac: fc.uint8Array({ maxLength: 32 }) }),
  fc.record({ t: fc.constant('files' as const), entries: fc.array(entry, { maxLength: 20 }) }),
  fc.constant({ t: 'filesEnd' as const }),
  fc.record({ t: fc.constant('summary' as const), dirs: fc.array(fc.record({ path: fc.oneof(fc.constant(''), relPath), hash: fc.uint8Array({ minLength: 16, maxLength: 16 }) }), { minLength: 1, maxLength: 20 }) }),
  fc.record({ t: fc.constant('summaryWant' as const), paths: fc.array(fc.oneof(fc.constant(''), relPath), { maxLength: 20 }) }),
  fc.record({ t: fc.constant('listRoom' as const), upTo: fc.nat() }),
  fc.record({ t: fc.constant('want' as const), id: u32, path: relPath }),
  fc.record({ t: fc.constant('want' as const), id: u32, path: relPath, probe: fc.constant(true as const), digest: fc.constant(true as const) }, { requiredKeys: ['t', 'id', 'path', 'probe'] }),
  fc.record({ t: fc.constant('probe' as const), id: u32, size: fc.nat(), keys: fc.integer({ min: 0, max: 64 }).chain((n) => fc.uint8Array({ minLength: 4 * n, maxLength: 4 * n })) }),
  fc.record({ t: fc.constant('probe' as const), id: u32, size: fc.nat(), keys: fc.uint8Array({ minLength: 8, maxLength: 8 }), digest }),
  fc.record({ t: fc.constant('probe' as const), id: u32, size: fc.nat(), keys: fc.uint8Array({ minLength: 8, maxLength: 8 }), anchors: fc.array(u32, { maxLength: 64 }) }),
  fc.record({ t: fc.constant('chunksWant' as const), id: u32 }),
  fc.record({ t: fc.constant('wholeWant' as const), id: u32 }),
  fc.record({ t: fc.constant('chunks' as const), id: u32, chunks: chunkList }).map((m) => ({ ...m, size: listEnd(m.chunks) })),
  fc.record({ t: fc.constant('chunks' as const), id: u32, chunks: chunkList, more: fc.constant(true) }).map((m) => ({ ...m, size: listEnd(m.chunks) + 7 })),
  fc.record({ t: fc.constant('notice' as const), message: text }),
  fc.record({ t: fc.constant('notice' as const), message: text, path: relPath, code: fc.constantFrom('IO', 'NOT_A_FILE') }),
  fc.record({
    t: fc.constant('plan' as const), id: u32, method: fc.constantFrom('delta' as const, 'whole' as const),
    seed: fc.option(relPath, { nil: null }), similarity: unit, signature: fc.option(bytes(300), { nil: null }),
  }),
  fc.record({
    t: fc.constant('plan' as const), id: u32, method: fc.constant('delta' as const), seed: relPath, similarity: unit, signature: bytes(300),
    refine: fc.constant(true as const), ends: fc.constant(true as const),
  }),
  fc.record({ t: fc.constant('data' as const), id: u32, bytes: bytes(3000) }),
  fc.record({ t: fc.constant('dataEnd' as const), id: u32 }),
  fc.record({
    t: fc.constant('batch' as const),
    messages: fc.array(fc.oneof(fc.record({ t: fc.constant('want' as const), id: u32, path: relPath }), fc.record({ t: fc.constant('dataEnd' as const), id: u32 })), { minLength: 2, maxLength: 5 }),
  }),
  fc.uniqueArray(fc.record({ id: u32, size: fc.integer({ min: 1, max: 5000 }) }), { minLength: 1, maxLength: 8, selector: (b) => b.id }).chain((streams) => {
    const raw = streams.reduce((a, b) => a + b.size, 0)
    return fc.record({ t: fc.constant('bundle' as const), streams: fc.constant(streams), codec: fc.integer({ min: 0, max: 2 }), raw: fc.constant(raw), z: fc.uint8Array({ maxLength: Math.min(raw, 300) }), dict: fc.integer({ min: 0, max: 65536 }) })
  }),
  fc.record(
    {
      t: fc.constant('result' as const), id: u32, path: relPath, action: name, ok: fc.boolean(), code, message: text,
      seed: relPath, similarity: unit, conflictCopy: relPath,
    },
    { requiredKeys: ['t', 'id', 'path', 'action', 'ok'] },
  ),
  fc.record({ t: fc.constant('done' as const), summary: fc.dictionary(name, fc.oneof(fc.nat(), fc.double({ min: -1e12, max: 1e12, noNaN: true }).map((x) => (x === 0 ? 0 : x))), { maxKeys: 10 }) }),
  fc.record({ t: fc.constant('error' as const), code, message: text }),
  fc.record({
    t: fc.constant('query' as const),
    query: fc.oneof(
      fc.record({ kind: fc.constant('similar' as const), sketch: bytes(300), metric: fc.constantFrom(...METRIC_NAMES), threshold: unit, top: fc.integer({ min: 1, max: LIMITS.maxQueryTop }), scan: fc.boolean() }),
      fc.record({ kind: fc.constant('groups' as const), metric: fc.constantFrom(...METRIC_NAMES), threshold: unit, scan: fc.boolean() }),
    ),
  }),
  fc.record(
    {
      t: fc.constant('similarFound' as const),
      files: fc.array(fc.record({ path: relPath, size: fc.nat(), jaccard: unit, dice: unit, lcs: unit, containment: unit, containedIn: unit, errorBound: unit }), { maxLength: 5 }),
      scan: fc.record({ files: fc.nat(), filesRead: fc.nat(), bytesRead: fc.nat(), removed: fc.nat() }),
    },
    { requiredKeys: ['t', 'files'] },
  ),
  fc.record(
    {
      t: fc.constant('groupsFound' as const),
      pieces: fc.array(fc.record({ cont: fc.boolean(), files: fc.array(fc.record({ path: relPath, size: fc.nat(), similarity: unit }), { maxLength: 4 }), pairs: fc.array(fc.record({ a: fc.nat({ max: 9 }), b: fc.nat({ max: 9 }), similarity: unit }), { maxLength: 4 }) }), { maxLength: 4 }),
      more: fc.boolean(),
      scan: fc.record({ files: fc.nat(), filesRead: fc.nat(), bytesRead: fc.nat(), removed: fc.nat() }),
    },
    { requiredKeys: ['t', 'pieces', 'more'] },
  ),
)

/** decode must return a message or throw BAD_MESSAGE; anything else is a bug. */
function decodeOrBad(frame: Uint8Array): Message | DsyncError {
  try {
    return decode(frame)
  } catch (err) {
    if (isDsyncError(err, 'BAD_MESSAGE')) return err
    throw err
  }
}

t.test('decode(encode(m)) equals m for every message type', async (t) => {
  const seen = new Set<string>()
  fc.assert(
    fc.property(message, (m) => {
      seen.add(m.t)
      // structuredClone: fast-check builds null-prototype records; the codec returns plain objects.
      t.strictSame(decode(encode(m)), structuredClone(m))
    }),
    { numRuns: 600, seed: 4 },
  )
  t.equal(seen.size, 25, 'every message type was generated')
})

t.test('random bytes decode to BAD_MESSAGE, never another error', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
      const r = decodeOrBad(b)
      if (!(r instanceof DsyncError)) t.ok(encode(r), 'anything accepted is a valid message')
    }),
    { numRuns: 3000, seed: 7 },
  )
})

t.test('random mutations of valid frames decode to a valid message or BAD_MESSAGE', async (t) => {
  let rejected = 0
  fc.assert(
    fc.property(message, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 }), fc.constantFrom('set', 'cut', 'insert')), { minLength: 1, maxLength: 4 }), (m, edits) => {
      let frame = Uint8Array.from(encode(m))
      for (const [at, value, op] of edits) {
        const i = at % (frame.length + 1)
        if (op === 'set' && i < frame.length) frame[i] = value
        else if (op === 'cut') frame = frame.subarray(0, i)
        else frame = Uint8Array.from([...frame.subarray(0, i), value, ...frame.subarray(i)])
      }
      const r = decodeOrBad(frame)
      if (r instanceof DsyncError) rejected++
      else t.ok(encode(r).length > 0)
    }),
    { numRuns: 2000, seed: 11 },
  )
  t.ok(rejected > 500, `most mutations are rejected (${rejected} of 2000)`)
})

t.test('hostile paths are refused in every path field', async (t) => {
  const hostile = ['..', '/abs', 'a/../b', 'a/..', './a', 'a\0b', 'a\\b', 'C:\\x', '', 'a//b', 'a/', `${'x'.repeat(256)}`,
    `${'abc/'.repeat(1100)}z`, '.dsync/state', 'd/.dsync-tmp-1']
  const e = (path: string): FileEntry => ({ path, kind: 'file', size: 1, mtimeMs: 1, mode: 0o644 })
  for (const p of hostile) {
    const frames: Message[] = [
      { t: 'want', id: 1, path: p },
      { t: 'files', entries: [e('ok'), e(p)] },
      { t: 'result', id: 1, path: p, action: 'new', ok: true },
      { t: 'plan', id: 1, method: 'delta', seed: p, similarity: 0.5, signature: null },
    ]
    for (const m of frames) {
      t.throws(() => decode(encode(m)), { code: 'BAD_MESSAGE' }, `${m.t} with ${JSON.stringify(p.slice(0, 20))}`)
    }
  }
  t.throws(() => decode(encode({ t: 'auth', version: 1, mac: new Uint8Array(0), challenge: new Uint8Array(32), role: 'pull', subdir: '../up', options: { dryRun: false, delete: false, checksum: false, threshold: 0.5, metric: 'dice', force: false, exclude: [] } })), { code: 'BAD_MESSAGE', message: /subdir/ })
  t.throws(() => decode(encode({ t: 'want', id: 1, path: 'a/../../etc/passwd' })), { message: /'\.\.' segment/ }, 'the reason reaches the message')
})

t.test('malformed fields and frames are refused with a message naming the field', async (t) => {
  // Hostile frames are built below the codec, as a peer could: raw msgpack of any shape.
  const raw = new Packr({ useRecords: false })
  const bad = (m: unknown): Uint8Array => raw.pack(m)
  t.throws(() => decode(bad({ t: 'nope' })), { code: 'BAD_MESSAGE', message: /unknown message type "nope"/ })
  t.throws(() => decode(bad({ t: 'want', id: -1, path: 'a' })), { message: /want.*id/ })
  t.throws(() => decode(bad({ t: 'want', id: 1.5, path: 'a' })), { message: /id/ })
  t.throws(() => decode(bad({ t: 'data', id: 1, bytes: 'text' })), { message: /bytes must be binary/ })
  t.throws(() => decode(bad({ t: 'probe', id: 1, size: 9, keys: new Uint8Array(8), anchors: new Uint8Array(5) })), { message: /'probe'.*anchors is 5 bytes/ })
  t.throws(() => decode(bad({ t: 'probe', id: 1, size: 9, keys: new Uint8Array(8), anchors: new Uint8Array(260) })), { message: /'probe'.*anchors/ })
  t.throws(() => decode(bad({ t: 'summary', dirs: [], hashes: new Uint8Array(0) })), { message: /'summary'.*dirs is empty/ })
  t.throws(() => decode(bad({ t: 'summary', dirs: ['a', 'b'], hashes: new Uint8Array(16) })), { message: /'summary'.*hashes/ }, '16 bytes a directory')
  t.throws(() => decode(bad({ t: 'summary', dirs: ['../up'], hashes: new Uint8Array(16) })), { message: /'summary'.*dirs\[0\]/ })
  t.throws(() => decode(bad({ t: 'summary', dirs: Array.from({ length: 1001 }, (_, i) => `d${i}`), hashes: new Uint8Array(16016) })), { message: /'summary'.*dirs has 1001 items/ })
  t.throws(() => decode(bad({ t: 'listRoom', upTo: -1 })), { message: /'listRoom'.*upTo/ })
  t.throws(() => decode(bad({ t: 'listRoom', upTo: 2 ** 60 })), { message: /'listRoom'.*upTo/ }, 'past a safe integer')
  t.throws(() => decode(bad({ t: 'summaryWant', paths: ['a/../..'] })), { message: /'summaryWant'.*paths\[0\]/ })
  const query = { t: 'query', kind: 'similar', metric: 'dice', threshold: 0.5, scan: true, top: 3, sketch: new Uint8Array(9) }
  t.throws(() => decode(bad({ ...query, metric: 'cosine' })), { message: /'query'.*metric must be one of/ })
  t.throws(() => decode(bad({ ...query, top: LIMITS.maxQueryTop + 1 })), { message: /'query'.*top/ })
  t.throws(() => decode(bad({ ...query, threshold: 1.5 })), { message: /'query'.*threshold/ })
  t.throws(() => decode(bad({ ...query, sketch: undefined })), { message: /'query'.*sketch/ }, 'a similar query carries its sketch')
  t.throws(() => decode(bad({ ...query, sketch: new Uint8Array(LIMITS.maxSketchBytes + 1) })), { message: /'query'.*sketch/ })
  const row = ['a', 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.01]
  t.throws(() => decode(bad({ t: 'similarFound', files: [['../up', ...row.slice(1)]] })), { message: /'similarFound'.*files\[0\]\.path/ })
  t.throws(() => decode(bad({ t: 'similarFound', files: [['a', 1, 1.5, 0.5, 0.5, 0.5, 0.5, 0]] })), { message: /'similarFound'.*files\[0\]\[2\]/ })
  t.throws(() => decode(bad({ t: 'similarFound', files: Array.from({ length: LIMITS.maxQueryTop + 1 }, () => row) })), { message: /'similarFound'.*files has 257 items/ })
  t.throws(() => decode(bad({ t: 'similarFound', files: [], scan: [1, 2, 3] })), { message: /'similarFound'.*scan/ })
  const pieces = (list: unknown): Uint8Array => {
    const z = raw.pack(list)
    return bad({ t: 'groupsFound', codec: 0, raw: z.length, z })
  }
  t.throws(() => decode(pieces([[false, [['../x', 1, 1]], []]])), { message: /'groupsFound'.*z\[0\]\.files\[0\]/ })
  t.throws(() => decode(pieces([[false, [['a', 1, 1]], [[0, -1, 0.5]]]])), { message: /'groupsFound'.*pairs\[0\]\.b/ })
  t.throws(() => decode(pieces([['yes', [], []]])), { message: /'groupsFound'.*cont must be a boolean/ })
  t.throws(() => decode(pieces([[false, [], []], 7])), { message: /'groupsFound'.*z\[1\] must be \[cont, files, pairs\]/ })
  t.equal(MAX_QUERY_TOP, LIMITS.maxQueryTop, 'the CLI\'s --top cap is the protocol\'s')
  const bundle = { t: 'bundle', ids: [1, 2], sizes: [3, 4], codec: 0, raw: 7, z: new Uint8Array(7) }
  t.same(decode(bad(bundle)), { t: 'bundle', streams: [{ id: 1, size: 3 }, { id: 2, size: 4 }], codec: 0, raw: 7, z: new Uint8Array(7), dict: 0 })
  t.throws(() => decode(bad({ ...bundle, dict: 65537 })), { message: /'bundle'.*dict/ }, 'a dictionary over the history a bundle may use')
  t.throws(() => decode(bad({ ...bundle, ids: [], sizes: [], raw: 0, z: new Uint8Array(0) })), { message: /'bundle'.*ids is empty/ })
  t.throws(() => decode(bad({ ...bundle, sizes: [3] })), { message: /'bundle'.*sizes has 1 items for 2 ids/ })
  t.throws(() => decode(bad({ ...bundle, raw: 8 })), { message: /'bundle'.*sizes add up to 7 bytes, not raw/ })
  t.throws(() => decode(bad({ ...bundle, ids: [1, 1] })), { message: /'bundle'.*ids names a file twice/ })
  t.throws(() => decode(bad({ ...bundle, sizes: [0, 7] })), { message: /'bundle'.*sizes\[0\]/ }, 'an empty stream is no delta')
  t.throws(() => decode(bad({ ...bundle, z: new Uint8Array(8) })), { message: /'bundle'.*z / }, 'packed larger than raw')
  t.throws(() => decode(bad({ ...bundle, ids: Array.from({ length: 1025 }, (_, i) => i), sizes: Array.from({ length: 1025 }, () => 1), raw: 1025 })), { message: /'bundle'.*ids has 1025 items/ })
  t.throws(() => decode(bad({ ...bundle, raw: 4 * 1024 * 1024 })), { message: /'bundle'.*raw / }, 'over the bundle size limit')
  t.throws(() => encode({ t: 'bundle', streams: [{ id: 1, size: 3 }], codec: 0, raw: 4, z: new Uint8Array(4), dict: 0 }), { code: 'INTERNAL' }, 'a sender that miscounts is a bug')
  const auth = (options: Record<string, unknown>) => ({ t: 'auth', version: 2, mac: new Uint8Array(0), challenge: new Uint8Array(32), role: 'pull', subdir: '', options: { dryRun: false, delete: false, checksum: false, threshold: 0.5, metric: 'dice', force: false, ...options } })
  t.throws(() => decode(bad(auth({ compressLevel: 25 }))), { code: 'BAD_MESSAGE', message: /compressLevel/ })
  t.throws(() => decode(bad(auth({ compressLevel: 0 }))), { code: 'BAD_MESSAGE', message: /compressLevel/ })
  t.match(decode(bad(auth({ compressLevel: 6 }))), { options: { compressLevel: 6 } })
  t.throws(() => decode(bad({ t: 'probe', id: 1, size: 10, keys: new Uint8Array(6) })), { code: 'BAD_MESSAGE', message: /keys.*4-byte/ })
  t.throws(() => decode(bad({ t: 'probe', id: 1, size: 10, keys: new Uint8Array(65 * 4) })), { code: 'BAD_MESSAGE', message: /keys/ })
  t.throws(() => decode(bad({ t: 'probe', id: 1, size: -1, keys: new Uint8Array(4) })), { code: 'BAD_MESSAGE', message: /size/ })
  t.throws(() => decode(bad({ t: 'probe', id: 1, size: 1, keys: new Uint8Array(4), digest: new Uint8Array(31) })), { code: 'BAD_MESSAGE', message: /digest/ })
  t.throws(() => encode({ t: 'probe', id: 1, size: 1, keys: new Uint8Array(5) }), { code: 'INTERNAL' })
  t.throws(() => decode(bad({ t: 'plan', id: 1, method: 'delta', seed: null, similarity: 2, signature: null })), { message: /similarity/ })
  t.throws(() => decode(bad({ t: 'hello', versions: [1], server: 's', challenge: new Uint8Array(5) })), { message: /challenge must be 32 bytes/ })
  t.throws(() => decode(bad({ t: 'done', summary: { 'bad key!': 1 } })), { message: /counter name/ })
  t.throws(() => decode(bad({ t: 'error', code: 'lower', message: 'x' })), { message: /code/ })
  t.throws(() => decode(Buffer.from('93c0c0c0', 'hex')), { message: /must be a map/ })
  t.throws(() => decode(new Uint8Array(0)), { code: 'BAD_MESSAGE' })
  // 2^53 + 2 as uint64: decodes as an inexact number, which the safe-integer check refuses.
  const big = Buffer.concat([Buffer.from('82a174a7', 'hex'), Buffer.from('dataEnd'), Buffer.from('a26964cf', 'hex'), Buffer.from('0020000000000002', 'hex')])
  t.throws(() => decode(big), { message: /id must be a whole number/ })
  t.throws(() => decode(Buffer.from(`dd${'ffffffff'}`, 'hex')), { code: 'BAD_MESSAGE' }, 'a 4-billion-item array header')
  t.throws(() => decode(new Uint8Array(200_000).fill(0x91)), { code: 'BAD_MESSAGE' }, 'nesting deep enough to overflow the stack')
  const fps = new Uint8Array(32)
  t.throws(() => decode(bad({ t: 'chunks', id: 1, size: 100, base: 0, lengths: new Uint8Array(4), fps })), { message: /fps must be 16 bytes/ })
  t.throws(() => decode(bad({ t: 'chunks', id: 1, size: 100, base: 0, lengths: new Uint8Array(8), fps })), { message: /lengths\[0\]/ }, 'a zero-length chunk')
  const one = new Uint8Array([100, 0, 0, 0])
  t.throws(() => decode(bad({ t: 'chunks', id: 1, size: 99, base: 0, lengths: one, fps: new Uint8Array(16) })), { message: /past the file's 99 bytes/ }, 'a list reaching past the file size')
  // A file list travels packed (and compressed: codec 0 = stored here) inside the message.
  const files = (entries: unknown[]) => {
    const z = raw.pack(entries)
    return bad({ t: 'files', codec: 0, raw: z.length, z })
  }
  t.throws(() => decode(files([['a', 0, 1, 1, 0o644, new Uint8Array(31)]])), { message: /digest must be 32 bytes/ })
  t.throws(() => decode(files([['a', 2, 1, 1, 0o644, null]])), { message: /target/ })
  t.throws(() => decode(files([['a', 7, 1, 1, 0o644, null]])), { message: /kind/ })
  t.throws(() => decode(bad({ t: 'files', codec: 0, raw: 5, z: raw.pack([]) })), { code: 'BAD_MESSAGE' }, 'declared size must match')
  t.throws(() => decode(bad({ t: 'files', codec: 1, raw: 100, z: new Uint8Array([1, 2, 3]) })), { code: 'BAD_MESSAGE' }, 'corrupt zstd')
  t.throws(() => decode(bad({ t: 'files', codec: 0, raw: 1e9, z: new Uint8Array(1) })), { code: 'BAD_MESSAGE', message: /raw/ }, 'size over the limit')
})

t.test('limits: oversized fields are refused on decode and never encoded', async (t) => {
  t.throws(() => encode({ t: 'data', id: 1, bytes: new Uint8Array(LIMITS.maxDataBytes + 1) }), { code: 'INTERNAL' })
  const entries = Array.from({ length: LIMITS.maxFilesPerMessage + 1 }, (_, i): FileEntry => ({ path: `f${i}`, kind: 'dir', size: 0, mtimeMs: 0, mode: 0o755 }))
  t.throws(() => encode({ t: 'files', entries }), { code: 'INTERNAL', message: /at most 1000/ })
  t.throws(() => encode({ t: 'chunks', id: 1, size: 10, chunks: [{ offset: 5, length: 1, fp: fingerprintFromBytes(new Uint8Array(16)) }, { offset: 9, length: 1, fp: fingerprintFromBytes(new Uint8Array(16)) }] }), { code: 'INTERNAL', message: /contiguous/ })
  t.throws(() => decode(encodeUnchecked({ id: 1, bytes: new Uint8Array(LIMITS.maxDataBytes + 1) })), { message: /more than the limit/ })
})

t.test('chunk lists travel as columns: 20 bytes per chunk', async (t) => {
  const chunks = Array.from({ length: 1000 }, (_, i): Chunk => ({ offset: i * 8192, length: 8192, fp: fingerprintFromBytes(new Uint8Array(16).fill(i & 255)) }))
  const frame = encode({ t: 'chunks', id: 3, size: 1000 * 8192, chunks })
  t.ok(frame.length < 1000 * 20 + 64, `${frame.length} bytes for 1000 chunks`)
  t.strictSame(decode(frame), { t: 'chunks', id: 3, size: 1000 * 8192, chunks })
})

/** Encodes a data message over the limit by building the frame by hand (encode refuses it). */
function encodeUnchecked(m: { id: number; bytes: Uint8Array }): Uint8Array {
  // What a peer that skips the limit check would send: msgpackr's own frame, any size.
  return new Packr({ useRecords: false, mapsAsObjects: true }).pack({ t: 'data', id: m.id, bytes: m.bytes })
}

t.test('a sampled chunk list (large files) round-trips with its offsets; overlaps are refused', async (t) => {
  const fp = (k: number) => fingerprintFromBytes(new Uint8Array(16).fill(k))
  const chunks: Chunk[] = [
    { offset: 8192, length: 9000, fp: fp(1) },
    { offset: 40000, length: 7000, fp: fp(2) },
    { offset: 5_000_000_000, length: 65536, fp: fp(3) },
  ]
  const m: Message = { t: 'chunks', id: 7, size: 6_000_000_000, chunks, sampled: true, digest: parseFileDigest('ab'.repeat(32)) as FileDigest }
  t.strictSame(decode(encode(m)), m)
  const overlapping: Message = { t: 'chunks', id: 7, size: 1 << 30, chunks: [chunks[1]!, chunks[0]!], sampled: true }
  t.throws(() => encode(overlapping), { code: 'INTERNAL', message: /overlaps/ })
})

t.test('data frames, written by hand for speed, read as msgpack the way packr writes them', async (t) => {
  const plain = new Packr({ useRecords: false, mapsAsObjects: true })
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), fc.uint8Array({ maxLength: 70_000 }), (id, bytes) => {
      const frame = encode({ t: 'data', id, bytes })
      const viaMsgpack = plain.unpack(frame) as { t: string; id: number; bytes: Uint8Array }
      t.equal(viaMsgpack.t, 'data')
      t.equal(viaMsgpack.id, id)
      t.same(Buffer.from(viaMsgpack.bytes), Buffer.from(bytes))
      t.same(decode(frame), { t: 'data', id, bytes: Buffer.from(bytes) })
      // and what packr itself writes still decodes the same
      t.same(decode(plain.pack({ t: 'data', id, bytes })), decode(frame))
    }),
    { numRuns: 60 },
  )
})

t.test('bundle frames, written by hand as data frames are, read as msgpack the way packr writes them', async (t) => {
  const plain = new Packr({ useRecords: false, mapsAsObjects: true })
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 65536 }), fc.integer({ min: 0, max: 2 }), (sizes, dict, codec) => {
      const raw = sizes.reduce((a, b) => a + b, 0)
      const streams = sizes.map((size, i) => ({ id: i + 1, size }))
      const z = randomBytes(raw, Math.max(0, raw - 7))
      const frame = encode({ t: 'bundle', streams, codec, raw, z, dict })
      const viaMsgpack = plain.unpack(frame) as Record<string, unknown>
      t.same(viaMsgpack, { t: 'bundle', ids: streams.map((b) => b.id), sizes, codec, raw, z: Buffer.from(z), ...(dict > 0 && { dict }) })
      t.same(decode(frame), { t: 'bundle', streams, codec, raw, z: Buffer.from(z), dict })
      // and what packr itself writes still decodes the same
      t.same(decode(plain.pack(viaMsgpack)), decode(frame))
    }),
    { numRuns: 40 },
  )
})

t.test('a data payload read with headroom: its header is written before it (no copy), the frame the same bytes', async (t) => {
  const plain = new Packr({ useRecords: false, mapsAsObjects: true })
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0xffff_ffff }), fc.uint8Array({ minLength: 0, maxLength: 70_000 }), (id, content) => {
      const bytes = allocWithHeadroom(content.length)
      bytes.set(content)
      const frame = encode({ t: 'data', id, bytes })
      t.equal(frame.buffer, bytes.buffer, 'the payload\'s own buffer')
      t.same(Buffer.from(frame), Buffer.from(encode({ t: 'data', id, bytes: content })), 'the same bytes as a copied frame')
      t.same(plain.unpack(frame), { t: 'data', id, bytes: Buffer.from(content) })
      // The room is used once: a second frame of the same payload is a copy, and the first stays.
      const again = encode({ t: 'data', id: id ^ 1, bytes })
      t.not(again.buffer, bytes.buffer)
      t.same(decode(frame), { t: 'data', id, bytes: Buffer.from(content) })
    }),
    { numRuns: 30 },
  )
  // A view that does not start where the buffer was handed out has no room of its own.
  const bytes = allocWithHeadroom(100).fill(7)
  t.not(encode({ t: 'data', id: 1, bytes: bytes.subarray(10) }).buffer, bytes.buffer)
})

t.test('result.candidates: up to 3 [path, similarity] pairs round-trip; more, a bad similarity or an unsafe path is BAD_MESSAGE', async (t) => {
  const base = { t: 'result' as const, id: 4, path: 'a.bin', action: 'delta', ok: true }
  const cands = [{ path: 'x/one.bin', similarity: 0.8 }, { path: 'two.bin', similarity: 0.25 }]
  t.same(decode(encode({ ...base, candidates: cands })), { ...base, candidates: cands })
  t.same(decode(encode(base)), base, 'absent stays absent')
  const raw = (candidates: unknown) => new Packr({ useRecords: false }).pack({ t: 'result', id: 4, path: 'a.bin', action: 'delta', ok: true, candidates })
  for (const [why, bad] of [
    ['four of them', [['a', 0.1], ['b', 0.1], ['c', 0.1], ['d', 0.1]]],
    ['similarity over 1', [['a', 1.5]]],
    ['not a pair', [['a']]],
    ['an absolute path', [['/etc/passwd', 0.5]]],
    ['a parent path', [['../x', 0.5]]],
  ] as const) {
    t.throws(() => decode(raw(bad)), { code: 'BAD_MESSAGE' }, why)
  }
})
