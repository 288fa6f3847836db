import { loadavg } from 'node:os'

/** A cell: text as is, numbers with `digits` decimals (default 1). */
export type Cell = string | number

/** Prints a titled table with aligned columns: text left, numbers right. */
export function printTable(title: string, headers: readonly string[], rows: readonly Cell[][], digits = 1): void {
  const text = rows.map((r) => r.map((c) => (typeof c === 'number' ? c.toFixed(Number.isInteger(c) ? 0 : digits) : c)))
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)))
  const numeric = headers.map((_, i) => rows.every((r) => typeof r[i] === 'number'))
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()
  console.log(`\n${title}`)
  console.log(line(headers))
  for (const r of text) console.log(line(r))
}

/** One line naming the machine state, so figures can be read against it. */
export function printEnvironment(): void {
  const [l1] = loadavg()
  console.log(`node ${process.version}, ${process.arch}, load average ${l1!.toFixed(2)} (figures are noisy when it exceeds the core count)`)
}

/** Bytes as MiB with one decimal. */
export function mib(bytes: number): number {
  return Math.round((bytes / (1024 * 1024)) * 10) / 10
}
