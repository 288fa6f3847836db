import type { DsyncError } from '../errors.js'
import type { Decision, FileEvent, SyncResult, SyncSummary } from '../sync/index.js'
import { EXIT_CODES } from './exit-codes.js'
import { formatBytes, formatPercent } from './options.js'

/** Where a two-way event happened: → written on the remote side, ← on this side, ⇄ a conflict, ✗ a deletion. */
function sideMark(e: FileEvent): string {
  if (e.side === undefined) return ''
  if (e.action === 'conflict') return '⇄ '
  if (e.action === 'deleted') return '✗ '
  return e.side === 'remote' ? '→ ' : '← '
}

/** One itemized line per file event (`-v`), e.g. `delta      notes/plan.txt  from notes/plan.txt at 93.1%`;
 *  a two-way sync's start with where it happened (`→ delta …` on the remote side). */
export function formatEvent(e: FileEvent): string {
  const where = e.side === undefined || e.action === 'conflict' ? '' : ` (${e.side})`
  const sim = e.similarity === undefined ? '' : ` at ${formatPercent(e.similarity)}`
  const detail = ((): string => {
    switch (e.action) {
      case 'delta':
        return `from ${e.seed}${sim}${e.message ? ` (${e.message})` : ''}`
      case 'whole':
        return e.seed === undefined ? 'no similar file' : `best seed ${e.seed}${sim} is below the threshold`
      case 'new':
        return e.seed === undefined ? '' : `best seed ${e.seed}${sim} is below the threshold`
      case 'copy':
        return `copy of ${e.seed}`
      case 'conflict':
        if (e.side !== undefined) return e.message ?? ''
        return `changed on both sides: the receiver's version is kept as ${e.conflictCopy}`
      case 'moved':
        return `from ${e.seed}${e.message ? ` (${e.message})` : ''}`
      case 'kept':
      case 'error':
        return e.message ?? e.code ?? ''
      case 'symlink':
        return `→ ${e.message ?? ''}`
      default:
        return ''
    }
  })()
  return `${sideMark(e)}${e.action.padEnd(10)} ${e.path}${where}${detail ? '  ' + detail : ''}`
}

/** `-vv`'s line under a file: the seeds weighed, best first (`           seeds: a.txt 93.1%, b.txt 41.0%`). */
export function formatCandidates(cands: readonly { readonly path: string; readonly similarity: number }[]): string {
  return `${' '.repeat(11)}seeds: ${cands.map((c) => `${c.path} ${formatPercent(c.similarity)}`).join(', ')}`
}

const DECISION_MARK: Readonly<Record<Decision['outcome'], string>> = {
  send: '→', receive: '←', move: '↷', delete: '✗', conflict: '⇄', resolved: '⇄', kept: '⇄',
}

/** A two-way plan's line (`dsync sync -n`): `→ send      notes/a.txt  new on the local side`. */
export function formatDecision(d: Decision): string {
  const what = d.outcome === 'move' ? `${d.path} (${d.side}, from ${d.from})` : d.outcome === 'delete' ? `${d.path} (${d.side})` : d.path
  return `${DECISION_MARK[d.outcome]} ${d.outcome.padEnd(9)} ${what}  ${d.why}`
}

/** The line a two-way sync ends with: what went each way. */
export function formatTwoWayOutcome(r: SyncResult, dryRun: boolean): string {
  if (dryRun) {
    const n = (o: Decision['outcome']) => r.plan!.decisions.filter((d) => d.outcome === o).length
    const parts = [`${n('send')} to send`, `${n('receive')} to receive`, `${n('move')} to move`, `${n('delete')} to delete`, plural(n('conflict') + n('kept') + n('resolved'), 'conflict')]
    return `plan: ${parts.join(', ')} (dry run: nothing changed)\n`
  }
  const count = (side: 'local' | 'remote', ...actions: FileEvent['action'][]) => r.events.filter((e) => e.side === side && actions.includes(e.action)).length
  const moved = ['new', 'delta', 'whole', 'copy', 'symlink'] as const
  const conflicts = r.events.filter((e) => e.action === 'conflict').length
  const s = r.summary
  const parts = [
    `${count('remote', ...moved)} sent`,
    `${count('local', ...moved)} received`,
    ...(count('local', 'moved') + count('remote', 'moved') > 0 ? [`${count('local', 'moved') + count('remote', 'moved')} moved`] : []),
    ...(s.deleted > 0 ? [`${s.deleted} deleted`] : []),
    ...(conflicts > 0 ? [plural(conflicts, 'conflict')] : []),
    ...(s.errors > 0 ? [plural(s.errors, 'error')] : []),
  ]
  return `${parts.join(', ')}; ${formatBytes(s.wireBytesSent + s.wireBytesReceived)} on the wire\n`
}

/** `1 file`, `2 files`: a count with its noun, singular or plural. */
export function plural(n: number, noun: string, nouns = noun + 's'): string {
  return `${n} ${n === 1 ? noun : nouns}`
}

/** True when the run needed no file data: nothing sent, copied or deleted, no conflict. */
function isNoOp(s: SyncSummary): boolean {
  return s.transferred === 0 && s.copied === 0 && s.moved === 0 && s.deleted === 0 && s.conflicts === 0
}

/** How the sender's files went: the parts add up to the total (deletions are not among them:
 *  they are files the sender does not have). */
function fileBreakdown(s: SyncSummary): string {
  const parts = [
    `${s.transferred} transferred`,
    `${s.copied} copied locally`,
    ...(s.moved > 0 ? [`${s.moved} moved`] : []),
    `${s.unchanged} unchanged`,
    ...(s.conflicts > 0 ? [plural(s.conflicts, 'conflict')] : []),
  ]
  const other = s.files - s.transferred - s.copied - s.moved - s.unchanged - s.conflicts
  if (other > 0) parts.push(`${other} failed`)
  return `${s.files} (${parts.join(', ')})`
}

/** The `--stats` block. */
export function formatSummary(s: SyncSummary): string {
  const onWire = s.wireBytesSent + s.wireBytesReceived
  const rows: [string, string][] = [
    ['files', fileBreakdown(s)],
    ['deleted', `${s.deleted} (on the receiver: files the sender does not have)`],
    ['conflicts', String(s.conflicts)],
    ['errors', String(s.errors)],
    ['total size', formatBytes(s.totalBytes)],
    ['matched', `${formatBytes(s.matchedBytes)} (from seeds on the receiver)`],
    ['literal', `${formatBytes(s.literalBytes)} (before compression)`],
    ['wire sent', formatBytes(s.wireBytesSent)],
    ['wire received', formatBytes(s.wireBytesReceived)],
    // A no-op sends only the file list (to a peer of version 4 on, the tree summary): total size
    // ÷ a few hundred bytes is a big number that says nothing about deltas.
    ['speedup', isNoOp(s) ? `none to measure: nothing changed, ${formatBytes(onWire)} on the wire (the file list or tree summary)` : `${s.speedup.toFixed(1)}× (total size ÷ wire bytes)`],
    ['files read', `${s.filesRead} on this side (changed since its last scan; the rest matched size and mtime)`],
    ['time', `${(s.durationMs / 1000).toFixed(2)} s`],
  ]
  const w = Math.max(...rows.map(([k]) => k.length))
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + '\n'
}

/** The one line every sync prints, verbose or not. */
export function formatOutcome(s: SyncSummary, dryRun: boolean): string {
  const would = dryRun ? ' (dry run: nothing changed)' : ''
  const extra = [
    s.copied > 0 && `${s.copied} copied locally`,
    s.moved > 0 && `${s.moved} moved`,
    s.deleted > 0 && `${s.deleted} deleted`,
    s.conflicts > 0 && plural(s.conflicts, 'conflict'),
    s.errors > 0 && plural(s.errors, 'error'),
  ]
    .filter(Boolean)
    .join(', ')
  return `${plural(s.transferred, 'file')} transferred${extra ? ', ' + extra : ''}; ${formatBytes(s.wireBytesSent + s.wireBytesReceived)} on the wire${would}\n`
}

/** A failure as --json prints it: `{ "error": { "code", "message", "exit" } }` holds this. */
export function jsonError(e: DsyncError): { code: string; message: string; exit: number } {
  return { code: e.code, message: e.message, exit: EXIT_CODES[e.code] }
}
