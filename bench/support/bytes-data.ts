/**
 * The classes of change of issue 11 (bench/bytes.ts): before/after trees, and for each changed
 * file of "after" the basis a told-basis tool is handed (the file it was made from). Seeded:
 * the same bytes on every run.
 */
import { KiB, MiB, seededBytes, xorshift32 } from './data.js'
import { codeText, editCode, logText, overwrite } from './delta-data.js'
import { seededText, textEdits, type Tree } from './sync-data.js'

/** One class: the trees, and per changed or new path of "after" its basis in "before" (if any). */
export interface BytesClass {
  readonly name: string
  readonly what: string
  /** options for dsync push (rsync -az runs as always) */
  readonly dsyncArgs?: readonly string[]
  make(): { before: Tree; after: Tree; basis: ReadonlyMap<string, string | null> }
}

const pad = (i: number): string => String(i).padStart(3, '0')

/** `base` with `n` seeded deletions of 1..`maxLen` bytes at distinct offsets. */
function deletions(base: Uint8Array, seed: number, n: number, maxLen: number): Uint8Array {
  const next = xorshift32(seed)
  const cuts = Array.from({ length: n }, () => ({ at: next() % base.length, len: 1 + (next() % maxLen) })).sort((a, b) => a.at - b.at)
  const parts: Uint8Array[] = []
  let pos = 0
  for (const c of cuts) {
    if (c.at < pos) continue
    parts.push(base.subarray(pos, c.at))
    pos = Math.min(base.length, c.at + c.len)
  }
  parts.push(base.subarray(pos))
  return Buffer.concat(parts)
}

/** 10 new code-like text files of 512 KiB beside 10 old ones ("new text" and its level-6 run). */
function newText(): ReturnType<BytesClass['make']> {
  const before: Tree = new Map()
  for (let i = 0; i < 10; i++) before.set(`old/o${pad(i)}.ts`, codeText(1900 + i, 128 * KiB))
  const after: Tree = new Map(before)
  const basis = new Map<string, null>()
  for (let i = 0; i < 10; i++) {
    after.set(`new/n${pad(i)}.ts`, codeText(1950 + i, 512 * KiB))
    basis.set(`new/n${pad(i)}.ts`, null)
  }
  return { before, after, basis }
}

/** The classes; `big` adds the 1 GiB one (2 GiB of memory, minutes of CPU). */
export function bytesClasses(big: boolean): readonly BytesClass[] {
  const classes: BytesClass[] = [
    {
      name: 'source edits',
      what: '50 source files × 110 KiB, 2–6 lines edited in each',
      make() {
        const before: Tree = new Map()
        const after: Tree = new Map()
        const basis = new Map<string, string>()
        const next = xorshift32(11)
        for (let i = 0; i < 50; i++) {
          const p = `src/m${i % 5}/file-${pad(i)}.ts`
          const text = codeText(1100 + i, 110 * KiB)
          before.set(p, text)
          after.set(p, editCode(text, 1200 + i, 2 + (next() % 5)))
          basis.set(p, p)
        }
        return { before, after, basis }
      },
    },
    {
      name: 'insert + deletes',
      what: '20 MiB binary: 1 KiB inserted at 4 KiB + 123, 5 deletions of 1–64 B',
      make() {
        const big = seededBytes(1301, 20 * MiB)
        const at = 4 * KiB + 123
        const inserted = Buffer.concat([big.subarray(0, at), seededBytes(1302, KiB), big.subarray(at)])
        return { before: new Map([['big.bin', big]]), after: new Map([['big.bin', deletions(inserted, 1303, 5, 64)]]), basis: new Map([['big.bin', 'big.bin']]) }
      },
    },
    {
      name: 'overwrites 50M',
      what: '50 MiB binary, 100 × 64 B overwritten at scattered offsets',
      make() {
        const big = seededBytes(1401, 50 * MiB)
        return { before: new Map([['disk.img', big]]), after: new Map([['disk.img', overwrite(big, 1402, 100, 64)]]), basis: new Map([['disk.img', 'disk.img']]) }
      },
    },
    {
      name: 'log append',
      what: '20 MiB log, 1 MiB of lines appended',
      make() {
        const head = logText(1501, 0, 20 * MiB)
        const lines = Buffer.from(head).toString('latin1').split('\n').length - 1
        const after = Buffer.concat([head, logText(1501, lines, MiB)])
        return { before: new Map([['var/app.log', head]]), after: new Map([['var/app.log', after]]), basis: new Map([['var/app.log', 'var/app.log']]) }
      },
    },
    {
      name: 'renames',
      what: '30 files × 256 KiB (binary) moved or renamed, unchanged',
      make() {
        const before: Tree = new Map()
        const after: Tree = new Map()
        const basis = new Map<string, string>()
        for (let i = 0; i < 30; i++) {
          const data = seededBytes(1600 + i, 256 * KiB)
          const from = `data/f${pad(i)}.bin`
          const to = i % 2 === 0 ? `data/f${pad(i)}-renamed.bin` : `archive/f${pad(i)}.bin`
          before.set(from, data)
          after.set(to, data)
          basis.set(to, from)
        }
        return { before, after, basis }
      },
    },
    {
      name: 'rename + edit',
      what: '30 text files × 64 KiB renamed or moved, 3 small edits each',
      make() {
        const before: Tree = new Map()
        const after: Tree = new Map()
        const basis = new Map<string, string>()
        for (let i = 0; i < 30; i++) {
          const from = `notes/n${pad(i)}.txt`
          const to = i % 2 === 0 ? `notes/n${pad(i)}-v2.txt` : `old/n${pad(i)}.txt`
          const text = seededText(1700 + i, 64 * KiB)
          before.set(from, text)
          after.set(to, textEdits(text, 1750 + i, 3, 40))
          basis.set(to, from)
        }
        return { before, after, basis }
      },
    },
    {
      name: 'pieces of others',
      what: '24 files × 256 KiB, 12 new: 160 KiB of one + 64 KiB of another + 32 KiB new',
      make() {
        const before: Tree = new Map()
        const src: Uint8Array[] = []
        for (let i = 0; i < 24; i++) {
          src.push(seededBytes(1800 + i, 256 * KiB))
          before.set(`src/s${pad(i)}.bin`, src[i]!)
        }
        const after: Tree = new Map(before)
        const basis = new Map<string, string>()
        const next = xorshift32(1850)
        for (let i = 0; i < 12; i++) {
          const [a, b] = [next() % 24, next() % 24]
          const [oa, ob] = [next() % (96 * KiB), next() % (192 * KiB)]
          const p = `merged/m${pad(i)}.bin`
          after.set(p, Buffer.concat([src[a]!.subarray(oa, oa + 160 * KiB), src[b]!.subarray(ob, ob + 64 * KiB), seededBytes(1860 + i, 32 * KiB)]))
          basis.set(p, `src/s${pad(a)}.bin`)
        }
        return { before, after, basis }
      },
    },
    { name: 'new text', what: '10 new compressible text files × 512 KiB beside 10 old ones', make: newText },
    {
      name: 'new text, level 6',
      dsyncArgs: ['--compress-level', '6'],
      what: 'the same, dsync --compress-level 6 (for slow links; rsync -az as always)',
      make: newText,
    },
    {
      // The first push of a source tree: per-file costs (wants, results, each file compressed
      // alone or with the others) show here, not on large files. The files of the speed
      // bench's "push 20k" (bench/support/scale-data.ts), a tenth as many.
      name: 'new small files',
      what: '2,000 new small text files, 100 B–8 KiB (log-uniform), in 20 folders',
      make() {
        const before: Tree = new Map()
        for (let i = 0; i < 10; i++) before.set(`old/o${pad(i)}.txt`, seededText(2100 + i, 4 * KiB))
        const after: Tree = new Map(before)
        const basis = new Map<string, null>()
        const next = xorshift32(2200)
        for (let i = 0; i < 2000; i++) {
          const p = `new/d${String(i % 20).padStart(2, '0')}/f${String(i).padStart(4, '0')}.txt`
          after.set(p, seededText(2300 + i, Math.round(100 * (8192 / 100) ** (next() / 2 ** 32))))
          basis.set(p, null)
        }
        return { before, after, basis }
      },
    },
    {
      name: 'new random',
      what: '10 new random files × 1 MiB beside 10 old ones',
      make() {
        const before: Tree = new Map()
        for (let i = 0; i < 10; i++) before.set(`old/o${pad(i)}.bin`, seededBytes(2000 + i, 256 * KiB))
        const after: Tree = new Map(before)
        const basis = new Map<string, null>()
        for (let i = 0; i < 10; i++) {
          after.set(`new/r${pad(i)}.bin`, seededBytes(2050 + i, MiB))
          basis.set(`new/r${pad(i)}.bin`, null)
        }
        return { before, after, basis }
      },
    },
  ]
  if (big) {
    classes.push({
      name: '1 GiB overwrites',
      what: '1 GiB binary, 1024 × 1 KiB overwritten at scattered offsets',
      make() {
        const big = seededBytes(2101, 1024 * MiB)
        return { before: new Map([['vm.img', big]]), after: new Map([['vm.img', overwrite(big, 2102, 1024, KiB)]]), basis: new Map([['vm.img', 'vm.img']]) }
      },
    })
  }
  return classes
}
