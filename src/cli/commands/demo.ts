import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Command } from 'commander'
import { DsyncError } from '../../errors.js'
import { openFileSource, walkTree } from '../../fs/index.js'
import { push, serve, type FileEvent, type SyncResult } from '../../sync/index.js'
import type { CliContext } from '../context.js'
import { editSampleTree, makeSampleTree } from '../demo/sample-tree.js'
import { formatBytes, formatPercent } from '../options.js'
import { DEFAULT_THRESHOLD } from '../../similarity/index.js'
import { formatEvent, formatOutcome, formatSummary } from '../output.js'
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

/** What became of the merged file, told as it happened: a delta takes one seed, so a file made
 *  of two halves goes whole unless one of them alone is similar enough. */
export function mergeStory(e: FileEvent | undefined): string {
  if (e === undefined) return `  ${MERGED_FILE} was not sent (unexpected: please report it).`
  if (e.action === 'delta') return `  ${MERGED_FILE}, made of pieces of two files, went as a delta from ${e.seed}.`
  const best = e.seed === undefined ? 'no file shares enough of it' : `the most similar, ${e.seed}, is ${formatPercent(e.similarity ?? 0)} similar`
  return (
    `  ${MERGED_FILE} went whole, though it is made of pieces of two files the server has:\n` +
    `  a delta is made against one seed, and neither is similar enough alone\n` +
    `  (${best}; the threshold is ${formatPercent(DEFAULT_THRESHOLD)}).`
  )
}

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('a complete round trip on this machine: a local server, a sample tree, push, edit, push again, with stats')
    .option('--keep', 'keep the temp directories for a look afterwards')
    .action(async (o: { keep?: boolean }) => {
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
        const third = await run('4. Third push, nothing changed: no file is read, only the file list crosses the wire')
        const equal = sameTree(await treeFingerprint(home), await treeFingerprint(work))
        say(`\n== Result`)
        say(`  home and work trees identical (content, modes, links): ${equal ? 'yes' : 'NO'}`)
        const sizeOf = (r: SyncResult) => r.summary.wireBytesSent + r.summary.wireBytesReceived
        say(`  the tree holds ${formatBytes(second.summary.totalBytes)}; push 3 put ${formatBytes(sizeOf(second))} on the wire (push 1: ${formatBytes(sizeOf(first))}; push 4, the no-op: ${formatBytes(sizeOf(third))})`)
        say(`  moved and copied files went as local copies, the renamed and edited one as a delta from its old path:`)
        say(`  rsync would send those whole (its --fuzzy looks only for similar names in the same folder).`)
        say(mergeStory(second.events.find((e) => e.path === MERGED_FILE)))
        if (o.keep) say(`  kept: ${dir}`)
        if (!equal) throw new DsyncError('INTERNAL', 'demo: the trees differ after the push; please report this')
      } finally {
        await server.close()
        if (!o.keep) await rm(dir, { recursive: true, force: true })
      }
    })
}
