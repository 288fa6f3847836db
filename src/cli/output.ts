import type { DsyncError } from '../errors.js'
import type { FileEvent, SyncSummary } from '../sync/index.js'
import { EXIT_CODES } from './exit-codes.js'
import { formatBytes, formatPercent } from './options.js'

/** One itemized line per file event (`-v`), e.g. `delta      notes/plan.txt  from notes/plan.txt at 93.1%`. */
export function formatEvent(e: FileEvent): string {
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
        return `changed on both sides: the receiver's version is kept as ${e.conflictCopy}`
      case 'kept':
      case 'error':
        return e.message ?? e.code ?? ''
      case 'symlink':
        return `→ ${e.message ?? ''}`
      default:
        return ''
    }
  })()
  return `${e.action.padEnd(10)} ${e.path}${detail ? '  ' + detail : ''}`
}

/** `1 file`, `2 files`: a count with its noun, singular or plural. */
export function plural(n: number, noun: string, nouns = noun + 's'): string {
  return `${n} ${n === 1 ? noun : nouns}`
}

/** True when the run needed no file data: nothing sent, copied or deleted, no conflict. */
function isNoOp(s: SyncSummary): boolean {
  return s.transferred === 0 && s.copied === 0 && s.deleted === 0 && s.conflicts === 0
}

/** How the sender's files went: the parts add up to the total (deletions are not among them:
 *  they are files the sender does not have). */
function fileBreakdown(s: SyncSummary): string {
  const parts = [
    `${s.transferred} transferred`,
    `${s.copied} copied locally`,
    `${s.unchanged} unchanged`,
    ...(s.conflicts > 0 ? [plural(s.conflicts, 'conflict')] : []),
  ]
  const other = s.files - s.transferred - s.copied - s.unchanged - s.conflicts
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
    // A no-op sends only the file list: total size ÷ a few hundred bytes is a big number that
    // says nothing about deltas.
    ['speedup', isNoOp(s) ? `none to measure: nothing changed, ${formatBytes(onWire)} on the wire (the file list)` : `${s.speedup.toFixed(1)}× (total size ÷ wire bytes)`],
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
