import type { FileEvent, SyncSummary } from '../sync/index.js'
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

/** The `--stats` block. */
export function formatSummary(s: SyncSummary): string {
  const rows: [string, string][] = [
    ['files', `${s.files} (${s.transferred} transferred, ${s.copied} copied locally, ${s.unchanged} unchanged, ${s.deleted} deleted)`],
    ['conflicts', String(s.conflicts)],
    ['errors', String(s.errors)],
    ['total size', formatBytes(s.totalBytes)],
    ['matched', `${formatBytes(s.matchedBytes)} (from seeds on the receiver)`],
    ['literal', `${formatBytes(s.literalBytes)} (before compression)`],
    ['wire sent', formatBytes(s.wireBytesSent)],
    ['wire received', formatBytes(s.wireBytesReceived)],
    ['speedup', `${s.speedup.toFixed(1)}× (total size ÷ wire bytes)`],
    ['files read', `${s.filesRead} (changed since the last scan; the rest matched size and mtime)`],
    ['time', `${(s.durationMs / 1000).toFixed(2)} s`],
  ]
  const w = Math.max(...rows.map(([k]) => k.length))
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + '\n'
}

/** The one line every sync prints, verbose or not. */
export function formatOutcome(s: SyncSummary, dryRun: boolean): string {
  const would = dryRun ? ' (dry run: nothing changed)' : ''
  const extra = [s.copied && `${s.copied} copied locally`, s.deleted && `${s.deleted} deleted`, s.conflicts && `${s.conflicts} conflicts`, s.errors && `${s.errors} errors`]
    .filter(Boolean)
    .join(', ')
  return `${s.transferred} files transferred${extra ? ', ' + extra : ''}; ${formatBytes(s.wireBytesSent + s.wireBytesReceived)} on the wire${would}\n`
}
