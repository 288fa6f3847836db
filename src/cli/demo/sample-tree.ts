import { appendFile, cp, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

/** Deterministic pseudo-random numbers (xorshift32): the demo shows the same story every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 0x100000000
  }
}

const WORDS = (
  'sync chunk seed delta file home work machine byte wire hash index similar copy rename move ' +
  'edit note plan draft report budget meeting project review release test build server client ' +
  'token message stream buffer memory disk network fast small large change version history'
).split(' ')

/** Prose-like text of about `bytes` bytes. */
function prose(seed: number, bytes: number): string {
  const r = rng(seed)
  const lines: string[] = []
  let n = 0
  while (n < bytes) {
    const words = Array.from({ length: 8 + Math.floor(r() * 8) }, () => WORDS[Math.floor(r() * WORDS.length)]!)
    const line = words.join(' ') + '.'
    lines.push(line)
    n += line.length + 1
  }
  return lines.join('\n') + '\n'
}

function binary(seed: number, bytes: number): Uint8Array {
  const r = rng(seed)
  const out = new Uint8Array(bytes)
  for (let i = 0; i < bytes; i++) out[i] = Math.floor(r() * 256)
  return out
}

async function put(root: string, rel: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(join(root, rel)), { recursive: true })
  await writeFile(join(root, rel), content)
}

/** The "home" tree of the demo: notes, a report, a log, a photo-like binary, a symlink. */
export async function makeSampleTree(root: string): Promise<void> {
  await put(root, 'notes/plan.md', prose(1, 40_000))
  await put(root, 'notes/ideas.md', prose(2, 25_000))
  await put(root, 'notes/meeting-2026-11.md', prose(3, 30_000))
  await put(root, 'reports/q3.md', prose(4, 120_000))
  await put(root, 'reports/budget.csv', prose(5, 60_000).replace(/ /g, ','))
  await put(root, 'logs/app.log', prose(6, 200_000))
  await put(root, 'photos/lake.raw', binary(7, 1_500_000))
  await put(root, 'archive/old-draft.md', prose(8, 50_000))
  await mkdir(join(root, 'empty-dir'), { recursive: true })
  await symlink('notes/plan.md', join(root, 'current-plan'))
}

/** What a day of work does to the tree; returns a line per change, for the demo to print. */
export async function editSampleTree(root: string): Promise<string[]> {
  const at = (rel: string) => join(root, rel)
  // A small edit in the middle of a note.
  const plan = await readFile(at('notes/plan.md'), 'utf8')
  await writeFile(at('notes/plan.md'), plan.slice(0, 20_000) + 'A new paragraph about the release plan.\n' + plan.slice(20_000))
  // A log grows at the end.
  await appendFile(at('logs/app.log'), prose(9, 30_000))
  // A report moves to another folder; another is renamed and edited.
  await mkdir(at('reports/2026'), { recursive: true })
  await rename(at('reports/q3.md'), at('reports/2026/q3-final.md'))
  const ideas = await readFile(at('notes/ideas.md'), 'utf8')
  await rename(at('notes/ideas.md'), at('notes/ideas-v2.md'))
  await writeFile(at('notes/ideas-v2.md'), ideas.slice(0, 15_000) + prose(10, 3_000) + ideas.slice(15_000))
  // A copy of the photo, and a few bytes near the start of the original changed.
  await cp(at('photos/lake.raw'), at('photos/lake-backup.raw'))
  const photo = await readFile(at('photos/lake.raw'))
  photo.set(binary(11, 64), 4096)
  await writeFile(at('photos/lake.raw'), photo)
  // A new file merged from pieces of two others, and one that is new through and through.
  const draft = await readFile(at('archive/old-draft.md'), 'utf8')
  const meeting = await readFile(at('notes/meeting-2026-11.md'), 'utf8')
  await writeFile(at('notes/summary.md'), draft.slice(0, 30_000) + meeting.slice(10_000, 25_000))
  await writeFile(at('notes/todo.md'), prose(12, 8_000))
  return [
    'edited notes/plan.md (one paragraph inserted)',
    'appended 30 KB to logs/app.log',
    'moved reports/q3.md → reports/2026/q3-final.md',
    'renamed notes/ideas.md → notes/ideas-v2.md and edited it',
    'copied photos/lake.raw → photos/lake-backup.raw, then changed 64 bytes of the original',
    'wrote notes/summary.md from pieces of archive/old-draft.md and notes/meeting-2026-11.md',
    'wrote a new notes/todo.md',
  ]
}
