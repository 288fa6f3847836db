/**
 * Chaos: real client processes killed at random points of pushes and pulls, fuzzed frames after
 * auth, hostile file lists; after each, a legitimate push with a time limit. Seeded and bounded:
 * `--kills N` (default 40) cases, `--seed S` (default 1); only 127.0.0.1.
 *
 * Counts per kind of case: tried; stuck (the next push not done within 10 s: the tree is held);
 * torn (a file on the receiver that is neither its old nor its new version); outside-root
 * changes (a sentinel file beside the root: hash, mode and mtime); leftovers (`.dsync-tmp-*`
 * files after a successful re-run). A stuck server is restarted on the same root, so one stuck
 * case does not make every later one stuck.
 *
 *   npm run bench -- chaos [--kills 40] [--seed 1]
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { WebSocket } from 'ws'
import { digestBytes } from '../src/hash/index.js'
import { connect, encode, type Channel, type FileEntry, type Message, type SessionOptions } from '../src/net/index.js'
import { pull, push, serve, type SyncServer } from '../src/sync/index.js'
import { seededBytes, MiB, xorshift32 } from './support/data.js'
import { flag, spawnDsync } from './support/procs.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'

const TOKEN = 'chaos-bench-token-0123456789'
const NEXT_PUSH_MS = 10_000
const OPTIONS: SessionOptions = { dryRun: false, delete: false, checksum: false, threshold: 0.5, metric: 'dice', force: false, exclude: [] }

type Kind = 'kill push' | 'kill pull' | 'fuzz frames' | 'hostile paths'
interface Counts { tried: number; stuck: number; torn: number; outside: number; leftovers: number }

async function listAll(root: string, rel = ''): Promise<string[]> {
  const out: string[] = []
  let names
  try {
    names = await readdir(join(root, rel), { withFileTypes: true })
  } catch {
    return out
  }
  for (const d of names) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`
    out.push(p)
    if (d.isDirectory()) out.push(...(await listAll(root, p)))
  }
  return out
}

const leftovers = async (root: string): Promise<number> => (await listAll(root)).filter((p) => p.split('/').pop()!.startsWith('.dsync-tmp-')).length

/** path → digest of every regular file under root, outside .dsync. */
async function digests(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const p of await listAll(root)) {
    if (p === '.dsync' || p.startsWith('.dsync/') || p.split('/').pop()!.startsWith('.dsync-tmp-')) continue
    const st = await lstat(join(root, p)).catch(() => undefined)
    if (st?.isFile()) out.set(p, digestBytes(await readFile(join(root, p))))
  }
  return out
}

/** Files whose digest is neither in `before` nor in `after` (the two versions it may be). */
function tornCount(now: Map<string, string>, before: Map<string, string>, after: Map<string, string>): number {
  let n = 0
  for (const [p, d] of now) if (d !== before.get(p) && d !== after.get(p)) n++
  return n
}

async function sentinelState(path: string): Promise<string> {
  const st = await lstat(path)
  return `${st.mode} ${st.mtimeMs} ${digestBytes(await readFile(path))}`
}

function within<T>(ms: number, p: Promise<T>): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([p, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)))]).finally(() => clearTimeout(timer))
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const vanish = (c: Channel): void => (c as unknown as { ws: WebSocket }).ws.terminate()

/** Changes the home tree: a few small files, sometimes an edit in a large one. */
async function mutate(home: string, r: () => number, round: number): Promise<void> {
  for (let k = 0; k < 5; k++) {
    const i = Math.floor(r() * 150)
    await writeFile(join(home, `d${i % 10}/f${i}.txt`), seededBytes(round * 1000 + k, 500 + Math.floor(r() * 20_000)))
  }
  if (r() < 0.5) {
    const big = join(home, `big${Math.floor(r() * 3)}.bin`)
    const data = Buffer.from(await readFile(big))
    data.set(seededBytes(round, 64 * 1024), Math.floor(r() * (data.length - 65536)))
    await writeFile(big, data)
  }
}

async function fuzz(url: string, r: () => number, round: number): Promise<void> {
  const { channel } = await connect(url, { token: TOKEN, role: r() < 0.7 ? 'push' : 'pull', options: OPTIONS })
  const ws = (channel as unknown as { ws: WebSocket }).ws
  const valid: Message[] = [
    { t: 'files', entries: [{ path: 'a.txt', kind: 'file', size: 5, mtimeMs: 1, mode: 0o644 }] },
    { t: 'filesEnd' },
    { t: 'data', id: 1, bytes: seededBytes(round, 1000) },
    { t: 'dataEnd', id: 1 },
    { t: 'want', id: 1, path: 'a.txt' },
  ]
  for (let k = 0; k < 1 + Math.floor(r() * 5); k++) {
    let frame: Uint8Array
    if (r() < 0.4) frame = seededBytes(round * 31 + k, 1 + Math.floor(r() * 4000))
    else {
      frame = Buffer.from(encode(valid[Math.floor(r() * valid.length)]!))
      for (let m = 0; m < 1 + Math.floor(r() * 4); m++) frame[Math.floor(r() * frame.length)] = Math.floor(r() * 256)
    }
    if (ws.readyState !== ws.OPEN) break
    ws.send(frame)
    await sleep(Math.floor(r() * 50))
  }
  await sleep(Math.floor(r() * 200))
  if (r() < 0.5) vanish(channel)
  else channel.close(1001)
}

async function hostilePaths(url: string, sentinel: string, r: () => number): Promise<void> {
  const M = 1_700_000_000_000
  const lists: FileEntry[][] = [
    [{ path: 'd0', kind: 'symlink', size: 0, mtimeMs: M, mode: 0o777, target: sentinel }, { path: 'd0', kind: 'file', size: 10, mtimeMs: M, mode: 0o777 }],
    [{ path: 'big0.bin', kind: 'symlink', size: 0, mtimeMs: M, mode: 0o777, target: sentinel }, { path: 'big0.bin', kind: 'file', size: 99, mtimeMs: M + 1, mode: 0o777 }],
    [{ path: 'link', kind: 'symlink', size: 0, mtimeMs: M, mode: 0o777, target: sentinel }, { path: 'link/x', kind: 'file', size: 10, mtimeMs: M, mode: 0o644 }],
    [{ path: 'd1/.dsync', kind: 'dir', size: 0, mtimeMs: M, mode: 0o755 }, { path: 'd1/.dsync/x', kind: 'file', size: 3, mtimeMs: M, mode: 0o644 }],
    [{ path: 'dup', kind: 'file', size: 3, mtimeMs: M, mode: 0o644 }, { path: 'dup', kind: 'file', size: 4, mtimeMs: M, mode: 0o644 }],
    [{ path: 'sd', kind: 'symlink', size: 0, mtimeMs: M, mode: 0o777, target: '..' }, { path: 'sd', kind: 'dir', size: 0, mtimeMs: M, mode: 0o755 }, { path: 'sd/y', kind: 'file', size: 2, mtimeMs: M, mode: 0o644 }],
  ]
  const { channel } = await connect(url, { token: TOKEN, role: 'push', options: { ...OPTIONS, checksum: r() < 0.3 } })
  try {
    await channel.send({ t: 'files', entries: lists[Math.floor(r() * lists.length)]! })
    await channel.send({ t: 'filesEnd' })
    const run = (async () => {
      for await (const m of channel.messages()) {
        if (m.t === 'want') await channel.send({ t: 'chunks', id: m.id, size: 0, chunks: [] })
        if (m.t === 'done') break
      }
    })()
    await within(3000, run.catch(() => undefined))
  } finally {
    if (r() < 0.5) vanish(channel)
    else channel.close()
  }
}

export async function run(): Promise<void> {
  const argv = process.argv.slice(2)
  const kills = Number(flag(argv, 'kills') ?? 40)
  const seed = Number(flag(argv, 'seed') ?? 1)
  const next = xorshift32(seed)
  const r = (): number => next() / 2 ** 32
  printEnvironment()
  const dir = await mkdtemp(join(tmpdir(), 'dsync-bench-chaos-'))
  const home = join(dir, 'home')
  const work = join(dir, 'root', 'work')
  const pulled = join(dir, 'pulled')
  const sentinel = join(dir, 'root', 'sentinel')
  for (let i = 0; i < 3; i++) {
    await mkdir(home, { recursive: true })
    await writeFile(join(home, `big${i}.bin`), seededBytes(seed * 100 + i, 8 * MiB))
  }
  for (let i = 0; i < 150; i++) {
    await mkdir(join(home, `d${i % 10}`), { recursive: true })
    await writeFile(join(home, `d${i % 10}/f${i}.txt`), seededBytes(seed * 1000 + i, 200 + (i * 997) % 30_000))
  }
  await mkdir(work, { recursive: true })
  await writeFile(sentinel, 'the sentinel: nothing may read, write, chmod or touch it\n')
  const sentinelBefore = await sentinelState(sentinel)
  const ac = new AbortController()
  const start = (): Promise<SyncServer> => serve({ root: work, host: '127.0.0.1', port: 0, token: TOKEN, log: () => undefined, signal: ac.signal })
  let server = await start()
  const opts = () => ({ token: TOKEN, signal: new AbortController().signal })
  await push(home, server.url, opts())
  await pull(server.url, pulled, opts())
  const counts = new Map<Kind, Counts>()
  const count = (k: Kind): Counts => counts.get(k) ?? (counts.set(k, { tried: 0, stuck: 0, torn: 0, outside: 0, leftovers: 0 }), counts.get(k)!)
  const started = Date.now()
  for (let round = 1; round <= kills; round++) {
    const x = r()
    const kind: Kind = x < 0.55 ? 'kill push' : x < 0.75 ? 'kill pull' : x < 0.9 ? 'fuzz frames' : 'hostile paths'
    const c = count(kind)
    c.tried++
    const before = await digests(work)
    const pulledBefore = await digests(pulled)
    if (kind === 'kill push' || kind === 'kill pull') {
      if (kind === 'kill push') await mutate(home, r, round)
      const args = kind === 'kill push' ? ['push', home, server.url] : ['pull', server.url, pulled]
      const p = spawnDsync(args, { DSYNC_TOKEN: TOKEN })
      await sleep(Math.floor(r() * 2500))
      p.child.kill('SIGKILL')
      await p.exited
      if (kind === 'kill push') c.torn += tornCount(await digests(work), before, await digests(home))
      else c.torn += tornCount(await digests(pulled), pulledBefore, before)
    } else if (kind === 'fuzz frames') {
      await fuzz(server.url, r, round).catch(() => undefined)
    } else {
      await hostilePaths(server.url, sentinel, r).catch(() => undefined)
    }
    if ((await sentinelState(sentinel)) !== sentinelBefore) c.outside++
    const next = await within(NEXT_PUSH_MS, push(home, server.url, opts()).then(() => 'ok' as const, (err: Error) => err))
    if (next === 'timeout') {
      c.stuck++
      ac.abort()
      await server.close()
      server = await start()
      await push(home, server.url, opts()).catch(() => undefined)
    } else {
      c.leftovers += await leftovers(work)
      if (kind === 'kill pull') {
        await within(NEXT_PUSH_MS, pull(server.url, pulled, opts()).catch(() => undefined))
        c.leftovers += await leftovers(pulled)
      }
    }
  }
  const wall = (Date.now() - started) / 1000
  await server.close()
  ac.abort()
  await rm(dir, { recursive: true, force: true })
  const rows: Cell[][] = []
  const total: Counts = { tried: 0, stuck: 0, torn: 0, outside: 0, leftovers: 0 }
  for (const [k, v] of [...counts].sort()) {
    rows.push([k, v.tried, v.stuck, v.torn, v.outside, v.leftovers])
    for (const f of Object.keys(total) as (keyof Counts)[]) total[f] += v[f]
  }
  rows.push(['total', total.tried, total.stuck, total.torn, total.outside, total.leftovers])
  printTable(`chaos: ${kills} cases, seed ${seed}, ${wall.toFixed(0)} s (stuck: next push not done within ${NEXT_PUSH_MS / 1000} s)`,
    ['case', 'tried', 'stuck', 'torn files', 'outside-root changes', 'leftover temp files'], rows)
}
