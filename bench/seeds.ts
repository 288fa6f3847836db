/**
 * Issue 10, "the right seed": does the receiver find a new file's true base among many
 * unrelated files? The receiver's tree holds `--distractors` files (default 10,000 × 16 KiB of
 * random bytes, in 100 folders) and the base files; the sender pushes, at new and
 * unrelated paths, one target per base: the base edited in one of the accuracy bench's patterns
 * (bench/support/edit-patterns.ts: prefix, scattered, insertions, reorder) keeping 10, 25, 50,
 * 75 or 90% of it, 5 targets per pattern and share (100 bases of 256 KiB). The push is a dry run (`dsync push --dry-run`, in process): the receiver
 * decides each file's seed as a real push would (its content index, read on demand) and sends
 * nothing. Per kept share: how often the seed chosen is the true base (top-1), how often the
 * base is among the candidates weighed (`-vv`: up to 3), and how often no candidate was found.
 * `npm run bench -- seeds [--distractors N]`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { push, serve } from '../src/sync/index.js'
import { KiB, seededBytes } from './support/data.js'
import { editedPair, loadCorpus, PATTERNS } from './support/edit-patterns.js'
import { flag } from './support/procs.js'
import { printEnvironment, printTable } from './support/table.js'

const KEPT = [0.1, 0.25, 0.5, 0.75, 0.9] as const
const PER_PATTERN = 5
const BASE_BYTES = 256 * KiB
const DISTRACTOR_BYTES = 16 * KiB
const TOKEN = 'bench-seeds-token-0123'

async function put(root: string, path: string, data: Uint8Array): Promise<void> {
  const abs = join(root, path)
  await mkdir(dirname(abs), { recursive: true })
  await writeFile(abs, data)
}

export async function run(): Promise<void> {
  printEnvironment()
  const distractors = Number(flag(process.argv, 'distractors') ?? 10_000)
  const tmp = await mkdtemp(join(tmpdir(), 'dsync-bench-seeds-'))
  const ac = new AbortController()
  try {
    const recv = join(tmp, 'recv')
    const send = join(tmp, 'send')
    await mkdir(send, { recursive: true })
    const started = performance.now()
    for (let i = 0; i < distractors; i++) {
      await put(recv, `noise/d${String(i % 100).padStart(3, '0')}/f${String(i).padStart(5, '0')}.bin`, seededBytes(70_000 + i, DISTRACTOR_BYTES))
    }
    const text = loadCorpus()
    const truth = new Map<string, { base: string; kept: number; pattern: string }>()
    let n = 0
    for (const kept of KEPT) {
      for (const pattern of PATTERNS) {
        for (let j = 0; j < PER_PATTERN; j++, n++) {
          const pair = editedPair(pattern, 'random', BASE_BYTES, kept, 90_000 + 17 * n, text)
          const base = `base/b${String(n).padStart(3, '0')}.bin`
          const target = `incoming/${pattern}-${String(n).padStart(3, '0')}.dat`
          await put(recv, base, pair.a)
          await put(send, target, pair.b)
          truth.set(target, { base, kept, pattern })
        }
      }
    }
    console.log(`  wrote ${distractors} distractors and ${n} bases / targets in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const server = await serve({ root: recv, host: '127.0.0.1', port: 0, token: TOKEN, log: () => undefined, signal: ac.signal })
    const t0 = performance.now()
    const r = await push(send, server.url, { token: TOKEN, signal: ac.signal, dryRun: true })
    const ms = performance.now() - t0
    await server.close()
    const right = (path: string, seed: string | undefined): boolean => seed === truth.get(path)!.base
    const rows = KEPT.map((kept) => {
      const events = r.events.filter((e) => truth.get(e.path)?.kept === kept)
      const byPattern = PATTERNS.map((p) => {
        const of = events.filter((e) => truth.get(e.path)!.pattern === p)
        return `${of.filter((e) => right(e.path, e.seed)).length}/${of.length}`
      })
      const top1 = events.filter((e) => right(e.path, e.seed)).length
      const weighed = events.filter((e) => e.candidates?.some((c) => right(e.path, c.path))).length
      const none = events.filter((e) => (e.candidates?.length ?? 0) === 0).length
      return [`${kept * 100}%`, ...byPattern, `${top1}/${events.length}`, `${weighed}/${events.length}`, none]
    })
    printTable(
      `Seeds among ${distractors} distractors (${DISTRACTOR_BYTES / KiB} KiB each) and ${n} bases of ${BASE_BYTES / KiB} KiB; targets at new paths; dry-run push ${(ms / 1000).toFixed(1)} s`,
      ['kept', ...PATTERNS.map((p) => `top-1 ${p}`), 'top-1', 'weighed', 'no candidate'],
      rows,
    )
  } finally {
    ac.abort()
    await rm(tmp, { recursive: true, force: true })
  }
}
