import { InvalidArgumentError } from 'commander'
import { CHUNKER_KINDS, METRIC_NAMES, type ChunkerKind, type MetricName } from '../choices.js'

const UNITS: Readonly<Record<string, number>> = Object.freeze({
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
})

/** Parses a byte size: `8192`, `8k`, `1M`, `64KiB` (binary units). Throws InvalidArgumentError. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text)
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined
  if (!m || unit === undefined) {
    throw new InvalidArgumentError(`"${text}" is not a size; write e.g. 8192, 8k, 64KiB or 1M`)
  }
  const v = Math.round(Number(m[1]) * unit)
  if (!Number.isSafeInteger(v) || v <= 0) throw new InvalidArgumentError(`"${text}" must be a positive size`)
  return v
}

/** Parses a threshold: `0.5` or `50%`, in [0, 1]. */
export function parseThreshold(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text)
  const v = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN
  if (!(v >= 0 && v <= 1)) {
    throw new InvalidArgumentError(`"${text}" is not a threshold; write a ratio from 0 to 1 (0.5) or a percentage (50%)`)
  }
  return v
}

function oneOf<T extends string>(choices: readonly T[], what: string): (text: string) => T {
  return (text) => {
    if ((choices as readonly string[]).includes(text)) return text as T
    throw new InvalidArgumentError(`unknown ${what} "${text}": choose one of ${choices.join(', ')}`)
  }
}

export const parseMetric: (text: string) => MetricName = oneOf(METRIC_NAMES, 'metric')
export const parseChunker: (text: string) => ChunkerKind = oneOf(CHUNKER_KINDS, 'chunker')

/** Formats a byte count for people: 1536 → "1.5 KiB". */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = n
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return u === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`
}

/** Formats a ratio in [0, 1] as a percentage: 0.4321 → "43.2%". */
export function formatPercent(r: number): string {
  return `${(r * 100).toFixed(1)}%`
}
