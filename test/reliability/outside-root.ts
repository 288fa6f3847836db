// Nothing outside the root is read, written, chmod'ed or utime'd, from either side (issue 7
// item 3), and hostile file lists get clear per-file errors (item 11). Each attack runs twice:
// a hostile pusher against a real server, and a malicious server (startServer + a scripted
// sender) against a real pulling client.
import t, { type Test } from 'tap'
import { lstat, mkdir, readFile, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { digestBytes } from '../../src/hash/index.js'
import { sessionWire, type FileEntry, type Message, type SessionOptions } from '../../src/net/index.js'
import { pull } from '../../src/sync/index.js'
import { testServer } from '../support/net.js'
import { fileEntry, fingerprintFile, hostileClient, scriptedSender, type SenderLog } from '../support/hostile.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const M = 1_700_000_000_000
const SECRET = Buffer.from('SECRET outside the root: never to be read, chmod-ed or touched by dsync\n')
const INSIDE = Buffer.from('inside content of f, same size as the secret. padding padding padding!!\n'.padEnd(SECRET.length, '.'))

interface Outcome {
  /** per-file outcomes the receiver reported: path, ok, code, message */
  readonly results: { path: string; ok: boolean; code?: string; message?: string }[]
  /** what ended the session, if not `done` */
  readonly error?: { code?: string; message: string }
  /** plans the receiver sent the hostile sender */
  readonly plans: Extract<Message, { t: 'plan' }>[]
}

type Direction = 'push to a server' | 'pull from a malicious server'
const DIRECTIONS: readonly Direction[] = ['push to a server', 'pull from a malicious server']

/** Runs one hostile file list against the receiver of `dir`, in the given direction. */
async function attack(t: Test, dir: Direction, root: string, entries: FileEntry[], contents: Record<string, Uint8Array> = {}, options: Partial<SessionOptions> = {}): Promise<Outcome> {
  const plansOf = (log: SenderLog | undefined) => (log?.received ?? []).filter((m): m is Extract<Message, { t: 'plan' }> => m.t === 'plan')
  if (dir === 'push to a server') {
    const server = await startServer(t, root)
    const log = await scriptedSender(await hostileClient(server.url, { options }), entries, contents)
    const results = log.received.filter((m): m is Extract<Message, { t: 'result' }> => m.t === 'result')
      .map((m) => ({ path: m.path, ok: m.ok, ...(m.code !== undefined && { code: m.code }), ...(m.message !== undefined && { message: m.message }) }))
    return { results, ...(log.error !== undefined && { error: log.error }), plans: plansOf(log) }
  }
  let log: SenderLog | undefined
  const server = await testServer(t, async (channel, session) => {
    if (session.role !== 'pull') throw new Error('expected a pull')
    // As `dsync serve` has it with a version-3 client: batches taken apart (PROTOCOL.md §4.8).
    log = await scriptedSender(sessionWire(channel, session.version), entries, contents)
  })
  try {
    const r = await pull(server.url, root, clientOpts({ token: null, ...options }))
    const results = r.events.filter((e) => e.action !== 'unchanged')
      .map((e) => ({ path: e.path, ok: e.action !== 'error', ...(e.code !== undefined && { code: e.code }), ...(e.message !== undefined && { message: e.message }) }))
    return { results, plans: plansOf(log) }
  } catch (err) {
    return { results: [], error: err as { code?: string; message: string }, plans: plansOf(log) }
  }
}

/** A tree with `f` (a regular file the receiver has scanned) and a secret file outside it. */
async function setup(t: Test): Promise<{ root: string; secret: string; before: string }> {
  const outside = await tempTree(t, { secret: SECRET })
  const secret = join(outside, 'secret')
  await utimes(secret, (M - 86_400_000) / 1000, (M - 86_400_000) / 1000)
  const root = await tempTree(t, { f: INSIDE })
  await utimes(join(root, 'f'), M / 1000, M / 1000)
  return { root, secret, before: await fingerprintFile(secret) }
}

function reportsErrorFor(o: Outcome, path: string): boolean {
  return o.error !== undefined || o.results.some((r) => r.path === path && !r.ok)
}

for (const dir of DIRECTIONS) {
  t.test(`${dir}: f as a symlink out, then f as a file, never reaches the outside file`, async (t) => {
    const cases: { what: string; second: (secret: string) => FileEntry; options?: Partial<SessionOptions>; content?: Uint8Array }[] = [
      { what: 'same size and mtime, mode 0777 (chmod through the link)', second: () => fileEntry('f', INSIDE.length, M, 0o777) },
      { what: '--checksum, same content, another mtime (utimes through the link)', second: () => fileEntry('f', INSIDE.length, M + 5000, 0o644, digestBytes(INSIDE)), options: { checksum: true } },
      { what: 'new content (the outside file as the delta seed)', second: () => fileEntry('f', 4000, M + 9000, 0o644), content: Buffer.alloc(4000, 7) },
    ]
    for (const c of cases) {
      await t.test(c.what, async (t) => {
        const { root, secret, before } = await setup(t)
        const entries: FileEntry[] = [{ path: 'f', kind: 'symlink', size: 0, mtimeMs: M, mode: 0o777, target: secret }, c.second(secret)]
        const o = await attack(t, dir, root, entries, c.content ? { f: c.content } : {}, c.options ?? {})
        t.equal(await fingerprintFile(secret), before, 'the outside file: same mode, mtime and content')
        t.same(await readFile(secret), SECRET, 'the outside file still holds the secret')
        t.notOk(o.plans.some((p) => p.signature !== null), 'no signature (of the outside file, the only possible seed) went to the sender')
        t.ok(reportsErrorFor(o, 'f'), `an error is reported for f (results ${JSON.stringify(o.results)}, error ${o.error?.message})`)
      })
    }
  })

  t.test(`${dir}: duplicate paths in one list are refused, only one applied`, async (t) => {
    const root = await tempTree(t)
    const x = Buffer.alloc(1000, 1)
    const o = await attack(t, dir, root, [fileEntry('a', 1000, M), fileEntry('a', 2000, M + 1)], { a: x })
    t.ok(o.results.filter((r) => r.path === 'a' && r.ok).length <= 1, 'at most one entry for a applied')
    t.ok(reportsErrorFor(o, 'a'), 'the duplicate is reported as an error')
    const got = await readFile(join(root, 'a')).catch(() => undefined)
    t.ok(got === undefined || got.length === 1000 || got.length === 2000, 'a is absent or one whole version')
  })

  t.test(`${dir}: .dsync as a path component anywhere is refused`, async (t) => {
    const root = await tempTree(t)
    await mkdir(join(root, 'sub'))
    const o = await attack(t, dir, root, [
      { path: 'sub', kind: 'dir', size: 0, mtimeMs: M, mode: 0o755 },
      { path: 'sub/.dsync', kind: 'dir', size: 0, mtimeMs: M, mode: 0o755 },
      fileEntry('sub/.dsync/x', 5, M),
      fileEntry('ok.txt', 5, M),
    ], { 'sub/.dsync/x': Buffer.from('evil!'), 'ok.txt': Buffer.from('fine!') })
    await t.rejects(lstat(join(root, 'sub/.dsync/x')), 'sub/.dsync/x was not written')
    t.ok(reportsErrorFor(o, 'sub/.dsync/x') || reportsErrorFor(o, 'sub/.dsync'), 'refused with an error')
  })

  t.test(`${dir}: a symlink then a directory at one path is a clear per-file error`, async (t) => {
    const root = await tempTree(t)
    const o = await attack(t, dir, root, [
      { path: 'd', kind: 'symlink', size: 0, mtimeMs: M, mode: 0o777, target: 'elsewhere' },
      { path: 'd', kind: 'dir', size: 0, mtimeMs: M, mode: 0o755 },
      fileEntry('z.txt', 5, M),
    ], { 'z.txt': Buffer.from('after') })
    t.equal(o.error, undefined, `the session is not ended by it (${o.error?.code}: ${o.error?.message})`)
    const forD = o.results.filter((r) => r.path === 'd' && !r.ok)
    t.ok(forD.length > 0, 'an error is reported for d')
    for (const r of forD) {
      t.not(r.code, 'INTERNAL', 'not INTERNAL')
      t.notMatch(r.message ?? '', /EEXIST/, 'the message is not a raw EEXIST')
    }
    t.same(await readFile(join(root, 'z.txt'), 'utf8'), 'after', 'the rest of the list is synced')
  })
}
