import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DsyncError } from '../../errors.js'
import { openFileSource, walkTree } from '../../fs/index.js'
import { push, serve, sync, type FileEvent, type SyncResult } from '../../sync/index.js'
import type { DemoCliOptions } from '../commands/demo.js'
import type { CliContext } from '../context.js'
import { editSampleTree, makeSampleTree } from '../demo/sample-tree.js'
import { formatBytes, formatPercent } from '../options.js'
import { DEFAULT_THRESHOLD } from '../../similarity/index.js'
import { formatEvent, formatOutcome, formatSummary, formatTwoWayOutcome } from '../output.js'
import { digestStream, randomToken } from '../../hash/index.js'

/** path → kind:content digest (or link target) for every entry: two trees are equal when these are. */
async function treeFingerprint(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for await (const e of walkTree(root)) {
    const what = e.kind === 'file' ? await digestStream(openFileSource(join(root, e.path))) : e.kind === 'symlink' ? e.target : ''
    out.set(e.path, `${e.kind}:${what}:${e.kind === 'symlink' ? '' : e.mode.toString(8)}`)
  }
  return out
}

function sameTree(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v)
}

/** The demo's file made of pieces of two others (see editSampleTree). */
const MERGED_FILE = 'notes/summary.md'

/** What became of the merged file, told as it happened: a delta from both files it was made of
 *  (a second seed), from one of them, or whole when no pair or file is similar enough. */
export function mergeStory(e: FileEvent | undefined): string {
  if (e === undefined) return `  ${MERGED_FILE} was not sent (unexpected: please report it).`
  const second = /^and (.+) as a second seed/.exec(e.message ?? '')?.[1]
  if (e.action === 'delta' && second !== undefined) {
    return (
      `  ${MERGED_FILE}, made of pieces of two files the server has, went as one delta from both\n` +
      `  (${e.seed} and ${second}; ${formatPercent(e.similarity ?? 0)} similar to the pair): no other sync tool copies from two files.`
    )
  }
  if (e.action === 'delta') return `  ${MERGED_FILE}, made of pieces of two files, went as a delta from ${e.seed}.`
  const best = e.seed === undefined ? 'no file shares enough of it' : `the most similar, ${e.seed}, is ${formatPercent(e.similarity ?? 0)} similar`
  // A second seed is weighed among the files the content index finds (it samples one chunk in
  // eight): a small piece of a file may go unseen.
  const why = (e.candidates?.length ?? 0) >= 2
    ? 'neither is similar enough alone, nor are the two together'
    : 'neither is similar enough alone, and the content index found only one of them'
  return (
    `  ${MERGED_FILE} went whole, though it is made of pieces of two files the server has:\n` +
    `  ${why}\n` +
    `  (${best}; the threshold is ${formatPercent(DEFAULT_THRESHOLD)}).`
  )
}

/** Writes `text` to `path` with an mtime `seconds` from now: the demo's edits are ordered. */
async function edit(path: string, text: string, seconds: number): Promise<void> {
  await writeFile(path, text)
  const at = new Date(Date.now() + seconds * 1000)
  await utimes(path, at, at)
}

/**
 * Step 5: both machines edit. The served tree is the work machine's own: it edits its files
 * there while home edits its copy; one file is edited on both. `dsync sync` from home then
 * sends home's edit, brings work's, and keeps both versions of the file both edited (the
 * newer, work's, under its name; home's as a conflict copy), on both machines. Returns the
 * result line: the conflict copy on both sides, or what went wrong.
 */
async function twoWayRound(home: string, work: string, url: string, token: string, say: (s?: string) => void, signal: AbortSignal): Promise<string> {
  const opts = { token, signal, machine: 'home' }
  await sync(home, url, opts) // the first two-way sync: both trees already match, nothing moves
  say('\n== 5. Both machines edit; one file on both: dsync sync (two-way)')
  await edit(join(home, 'notes/todo.md'), '- call the bank\n- book the train (home)\n', 10)
  await edit(join(work, 'reports/budget.csv'), 'item,amount\nrent,1200\nwork laptop,900\n', 20)
  await edit(join(home, 'notes/plan.md'), '# Plan, as edited at home\n', 30)
  await edit(join(work, 'notes/plan.md'), '# Plan, as edited at work\n', 40)
  say('  - home edits notes/todo.md; work edits reports/budget.csv; both edit notes/plan.md (work last)')
  say(`$ dsync sync -v ${home} ${url}`)
  const r = await sync(home, url, { ...opts, onEvent: (e) => e.action !== 'unchanged' && say('  ' + formatEvent(e)) })
  say('  ' + formatTwoWayOutcome(r, false).trimEnd())
  const copy = r.events.find((e) => e.action === 'conflict')?.conflictCopy
  if (copy === undefined) return 'NO conflict copy was made (unexpected: please report it)'
  const onBoth = await Promise.all([home, work].map((root) => readFile(join(root, copy), 'utf8').catch(() => '')))
  return onBoth.every((text) => text.includes('edited at home'))
    ? `the conflict copy ${copy} holds home's version on both machines; work's is notes/plan.md`
    : `the conflict copy ${copy} is missing on a side (unexpected: please report it)`
}

/** `dsync demo`'s action (registered in commands/demo.ts). */
export async function runDemo(ctx: CliContext, o: DemoCliOptions): Promise<void> {
  const say = (s = ''): void => void ctx.stdout.write(s + '\n')
  const dir = await mkdtemp(join(tmpdir(), 'dsync-demo-'))
  const home = join(dir, 'home')
  const work = join(dir, 'work')
  const token = randomToken()
  await mkdir(work)
  const server = await serve({ root: work, host: '127.0.0.1', port: 0, token, log: () => undefined, signal: ctx.signal })
  try {
    const run = async (title: string): Promise<SyncResult> => {
      say(`\n== ${title}`)
      say(`$ dsync push --delete -v --stats ${home} ${server.url}`)
      const r = await push(home, server.url, { token, delete: true, signal: ctx.signal, onEvent: (e) => e.action !== 'unchanged' && say('  ' + formatEvent(e)) })
      say(formatSummary(r.summary).replace(/^/gm, '  ').trimEnd())
      say('  ' + formatOutcome(r.summary, false).trimEnd())
      return r
    }
    say(`dsync demo: a server on ${server.url} serving ${work} (token-authenticated), and a "home" tree in ${home}.`)
    await makeSampleTree(home)
    const first = await run('1. First push: everything is new, sent whole and compressed')
    say('\n== 2. A day of work on the home machine')
    for (const line of await editSampleTree(home)) say(`  - ${line}`)
    const second = await run('3. Second push: deltas against the most similar file the server has')
    const third = await run('4. Third push, nothing changed: no file is read, only the tree summary crosses the wire')
    const twoWay = await twoWayRound(home, work, server.url, token, say, ctx.signal)
    const equal = sameTree(await treeFingerprint(home), await treeFingerprint(work))
    say(`\n== Result`)
    say(`  home and work trees identical (content, modes, links): ${equal ? 'yes' : 'NO'}`)
    const sizeOf = (r: SyncResult) => r.summary.wireBytesSent + r.summary.wireBytesReceived
    say(`  the tree holds ${formatBytes(second.summary.totalBytes)}; push 3 put ${formatBytes(sizeOf(second))} on the wire (push 1: ${formatBytes(sizeOf(first))}; push 4, the no-op: ${formatBytes(sizeOf(third))})`)
    say(`  the moved file was renamed on the server and the copied one copied there, the renamed and edited one went as a delta from its old path:`)
    say(`  rsync would send those whole (its --fuzzy looks only for similar names in the same folder).`)
    say(mergeStory(second.events.find((e) => e.path === MERGED_FILE)))
    say(`  two-way: ${twoWay}`)
    if (o.keep) say(`  kept: ${dir}`)
    if (!equal) throw new DsyncError('INTERNAL', 'demo: the trees differ after the push; please report this')
  } finally {
    await server.close()
    if (!o.keep) await rm(dir, { recursive: true, force: true })
  }
}
