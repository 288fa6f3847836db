/**
 * Hostile peers and the checks the reliability suite makes after them: an authenticated client
 * that sends what it likes and vanishes, a malicious sender for either side of a session (a
 * pushing client or a server a client pulls from), a channel tap that cuts the socket after a
 * chosen message, and tree checks (temp-file litter, torn files, a sentinel outside the root).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { cp, lstat, readFile, readdir } from 'node:fs/promises'
import type { Test } from 'tap'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { WebSocket } from 'ws'
import { chunkBytes, cutterFor } from '../../src/chunk/index.js'
import { decodeSignature, EMPTY_SIGNATURE, encodeDelta } from '../../src/delta/index.js'
import { digestBytes, type FileDigest } from '../../src/hash/index.js'
import { connect, LIMITS, sessionWire, type Channel, type FileEntry, type Message, type Role, type SessionOptions } from '../../src/net/index.js'
import { sampleChunks } from '../../src/store/index.js'
import { push, serve, SYNC_CHUNK_PARAMS } from '../../src/sync/index.js'
import type { Chunk } from '../../src/types.js'
import { OPTIONS } from './net.js'
import { clientOpts, startServer, TOKEN } from './sync.js'
import { tempTree } from './temp.js'

/** dsync's executable, from dist/test/support/. */
export const DSYNC_BIN = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))

/** The prefix of dsync's temp files (`TEMP_PREFIX`), spelled out so a rename there fails here. */
export const TEMP_NAME_PREFIX = '.dsync-tmp-'

/** Cuts the connection under a channel from `connect` or a server session at once, with no
 *  close frame: what a killed process or a dropped Wi-Fi looks like to the peer. */
export function vanish(channel: Channel): void {
  const under = (channel as { wire?: Channel }).wire ?? channel
  const ws = (under as unknown as { ws?: WebSocket }).ws
  if (ws === undefined) throw new Error('vanish: not a WebSocket channel')
  ws.terminate()
}

/** An authenticated session as a client, with the test token, ready for crafted messages; as a
 *  client session has it (batches taken apart, small messages batched: PROTOCOL.md §4.8), the
 *  channel under it in `wire`. */
export async function hostileClient(url: string, opts: { role?: Role; options?: Partial<SessionOptions>; token?: string | null } = {}): Promise<Channel> {
  const { channel, version } = await connect(url, {
    token: opts.token === undefined ? TOKEN : opts.token,
    role: opts.role ?? 'push',
    options: { ...OPTIONS, ...opts.options },
  })
  return Object.assign(sessionWire(channel, version), { wire: channel })
}

/** A `files` entry for a regular file. */
export function fileEntry(path: string, size: number, mtimeMs: number, mode = 0o644, digest?: FileDigest): FileEntry {
  return { path, kind: 'file', size, mtimeMs, mode, ...(digest !== undefined && { digest }) }
}

/** The `chunks` messages a real sender would send for `data` (sampled above 256 chunks). */
export function chunkMessages(id: number, data: Uint8Array): Message[] {
  const all = chunkBytes(data, cutterFor(SYNC_CHUNK_PARAMS)) as Chunk[]
  const sampled = all.length > 256
  const list = sampled ? sampleChunks(all) : all
  const out: Message[] = []
  for (let i = 0; i === 0 || i < list.length; i += LIMITS.maxChunksPerMessage) {
    const end = i + LIMITS.maxChunksPerMessage
    out.push({
      t: 'chunks', id, size: data.length, chunks: list.slice(i, end), ...(sampled && { sampled: true }),
      ...(end < list.length ? { more: true } : { digest: digestBytes(data) }),
    })
  }
  return out
}

/** What a scripted sender saw and how its session ended. */
export interface SenderLog {
  readonly received: Message[]
  /** the error that ended the session, if any (a peer's `error` message, a close) */
  error?: Error & { code?: string }
  /** true when the receiver said `done` */
  done: boolean
}

/**
 * Plays the sender role by script: sends `entries` (any paths, duplicates, kinds), answers each
 * `want` with the chunk list of `contents[path]` (or of empty content) and each `plan` with a
 * valid delta of it, until `done` or an error. The receiver on the other side is the one under
 * test: a server for a push, a real pulling client when this runs inside a server's onSession.
 */
export async function scriptedSender(
  channel: Channel,
  entries: readonly FileEntry[],
  contents: Readonly<Record<string, Uint8Array>> = {},
): Promise<SenderLog> {
  const log: SenderLog = { received: [], done: false }
  const byId = new Map<number, Uint8Array>()
  try {
    for (let i = 0; i === 0 || i < entries.length; i += LIMITS.maxFilesPerMessage) {
      await channel.send({ t: 'files', entries: entries.slice(i, i + LIMITS.maxFilesPerMessage) })
    }
    await channel.send({ t: 'filesEnd' })
    for await (const msg of channel.messages()) {
      log.received.push(msg)
      if (msg.t === 'want') {
        const data = contents[msg.path] ?? new Uint8Array(0)
        byId.set(msg.id, data)
        for (const m of chunkMessages(msg.id, data)) await channel.send(m)
      } else if (msg.t === 'plan') {
        const data = byId.get(msg.id) ?? new Uint8Array(0)
        const sig = msg.signature === null ? EMPTY_SIGNATURE : decodeSignature(msg.signature)
        const delta = encodeDelta(sig, (async function* () { yield data })())
        for await (const buf of delta.bytes) {
          for (let o = 0; o < buf.length; o += LIMITS.maxDataBytes) {
            await channel.send({ t: 'data', id: msg.id, bytes: buf.subarray(o, o + LIMITS.maxDataBytes) })
          }
        }
        await channel.send({ t: 'dataEnd', id: msg.id })
      } else if (msg.t === 'done') {
        log.done = true
        break
      }
    }
  } catch (err) {
    log.error = err as Error & { code?: string }
  }
  channel.close()
  return log
}

/**
 * Wraps a channel so that the session is cut (`vanish`) right after the `nth` message (1-based)
 * matching `when` has been sent or received. `fired` resolves when it was cut.
 */
export function cutAfter(channel: Channel, when: { sent?: Message['t']; received?: Message['t']; nth?: number }): Channel & { fired: Promise<void> } {
  let count = 0
  let fire: () => void = () => undefined
  const fired = new Promise<void>((r) => (fire = r))
  const hit = (): boolean => ++count === (when.nth ?? 1)
  const cut = (): void => {
    vanish(channel)
    fire()
  }
  return {
    fired,
    get stats() {
      return channel.stats
    },
    close: (code, reason) => channel.close(code, reason),
    fail: (err) => channel.fail(err),
    async send(msg) {
      await channel.send(msg)
      if (msg.t === when.sent && hit()) cut()
    },
    async *messages() {
      for await (const msg of channel.messages()) {
        if (msg.t === when.received && hit()) {
          cut()
          yield msg
          return
        }
        yield msg
      }
    },
  }
}

/** Rejects if `p` takes longer than `ms`; else its value and how long it took. */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now()
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms)
  })
  try {
    const value = await Promise.race([p, late])
    return { value, ms: Date.now() - start }
  } finally {
    clearTimeout(timer)
  }
}

/** Every path under `root` (files, dirs, links, hidden ones and `.dsync` included), relative. */
export async function listAll(root: string, rel = ''): Promise<string[]> {
  const out: string[] = []
  let names
  try {
    names = await readdir(join(root, rel), { withFileTypes: true })
  } catch {
    return out // removed while we looked, or not a directory
  }
  for (const d of names) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`
    out.push(p)
    if (d.isDirectory()) out.push(...(await listAll(root, p)))
  }
  return out
}

/** dsync temp files anywhere under `root`. */
export async function tempLeftovers(root: string): Promise<string[]> {
  return (await listAll(root)).filter((p) => p.split('/').pop()!.startsWith(TEMP_NAME_PREFIX))
}

/** Mode, mtime and content hash of a file: what must not change outside the root. */
export async function fingerprintFile(path: string): Promise<string> {
  const st = await lstat(path)
  return `${(st.mode & 0o7777).toString(8)} ${st.mtimeMs} ${digestBytes(await readFile(path))}`
}

/** A dsync CLI run in its own process, its output collected as it comes. */
export interface CliProcess {
  readonly child: ChildProcess
  stdout: string
  stderr: string
  /** exit code, or the signal name when killed */
  readonly exited: Promise<number | string>
  /** resolves once stdout+stderr match `re` (rejects if the process exits first) */
  waitFor(re: RegExp): Promise<void>
}

/** Spawns `node bin/dsync.js …args` with the test token in the environment. */
export function spawnDsync(args: readonly string[], env: Record<string, string> = {}, wrap: readonly string[] = []): CliProcess {
  const argv = [...wrap, process.execPath, DSYNC_BIN, ...args]
  // Without the test runner's NODE_OPTIONS (tap's loader): the child is a plain dsync process.
  const { NODE_OPTIONS: _, ...base } = process.env
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...base, DSYNC_TOKEN: TOKEN, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const waiters: { re: RegExp; resolve: () => void }[] = []
  const p: CliProcess = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'))),
    waitFor: (re) =>
      re.test(p.stdout + p.stderr)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiters.push({ re, resolve })),
            p.exited.then((c) => {
              if (!re.test(p.stdout + p.stderr)) throw new Error(`dsync exited (${c}) before printing ${re}; stderr: ${p.stderr}`)
            }),
          ]),
  }
  const check = (): void => {
    const all = p.stdout + p.stderr
    for (const w of waiters.splice(0)) (w.re.test(all) ? w.resolve : () => waiters.push(w))()
  }
  child.stdout!.on('data', (b: Buffer) => { p.stdout += b.toString(); check() })
  child.stderr!.on('data', (b: Buffer) => { p.stderr += b.toString(); check() })
  return p
}

/** path → kind, mode and content digest (or link target) of every entry dsync syncs: two
 *  trees are in sync when these are equal. Cheap on large files, unlike describeTree. */
export async function treeState(root: string): Promise<Record<string, string>> {
  const { walkTree } = await import('../../src/fs/index.js')
  const out: Record<string, string> = {}
  for await (const e of walkTree(root)) {
    const abs = join(root, e.path)
    if (e.kind === 'file') out[e.path] = `file ${e.mode.toString(8)} ${digestBytes(await readFile(abs))}`
    else if (e.kind === 'dir') out[e.path] = `dir ${e.mode.toString(8)}`
    else out[e.path] = `symlink ${e.target ?? ''}`
  }
  return out
}

/** Runs the real sender role over a session that is cut after the message `when` names
 *  (`{}`: right after the handshake, before anything is sent). Resolves once it was cut
 *  and the sender gave up; the sender's own error is expected and ignored. */
export async function cutPush(home: string, url: string, when: { sent?: Message['t']; received?: Message['t']; nth?: number }): Promise<void> {
  await cutSession('push', home, url, when)
}

/** Runs the real receiver role (a pull into `local`) over a session cut as in `cutPush`. */
export async function cutPull(url: string, local: string, when: { sent?: Message['t']; received?: Message['t']; nth?: number }): Promise<void> {
  await cutSession('pull', local, url, when)
}

async function cutSession(role: Role, dir: string, url: string, when: { sent?: Message['t']; received?: Message['t']; nth?: number }): Promise<void> {
  const { runReceiver, runSender, SyncReport, sessionOptions } = await import('../../src/sync/index.js')
  const { Store } = await import('../../src/store/index.js')
  const store = await Store.open(dir, { params: SYNC_CHUNK_PARAMS })
  const ac = new AbortController()
  try {
    const channel = await hostileClient(url, { role })
    if (when.sent === undefined && when.received === undefined) {
      vanish(channel)
      return
    }
    const cut = cutAfter(channel, when)
    const deps = { root: dir, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: ac.signal }
    const run = role === 'push' ? runSender(cut, deps) : runReceiver(cut, { ...deps, now: () => new Date() })
    // The role may finish before the chosen message comes (nothing to send): then it was not cut.
    await Promise.race([run.catch(() => undefined), cut.fired])
    ac.abort()
    await run.catch(() => undefined)
  } finally {
    await store.close()
  }
}

/**
 * A server on a fresh copy of `template` (a tree with its .dsync store, no server on it): each
 * cut gets its own server, so one frozen tree fails one case instead of every case after it.
 */
export async function serverOnCopy(t: Test, template: string, log?: string[]): Promise<{ url: string; work: string }> {
  const work = await tempTree(t)
  await cp(template, work, { recursive: true, preserveTimestamps: true })
  const server = await startServer(t, work, log === undefined ? {} : { log })
  return { url: server.url, work }
}

/** The template tree: `home` pushed once to a server that is then closed. */
export async function pushedTemplate(t: Test, home: string): Promise<string> {
  const template = await tempTree(t)
  const ac = new AbortController()
  const server = await serve({ root: template, host: '127.0.0.1', port: 0, token: TOKEN, log: () => undefined, signal: ac.signal })
  await push(home, server.url, clientOpts())
  ac.abort()
  await server.close()
  return template
}

