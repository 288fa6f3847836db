import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { main } from '../../src/cli/main.js'
import { formatEta, formatProgress } from '../../src/cli/progress.js'
import { randomBytes } from '../support/random.js'
import { startServer, TOKEN } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const BIN = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))
/** What a terminal shows, as lines: cursor-to-column (ESC[nG) and clear-line/screen-below
 *  (ESC[2K, ESC[0J) start a line again, as \r does; other control sequences go. */
function screenSegments(raw: string): string[] {
  // eslint-disable-next-line no-control-regex
  const text = raw.replace(/\x1b\[\d*G|\x1b\[2K|\x1b\[0?J/g, '\r').replace(/\x1b(?:\[[0-9;?]*[A-Za-z]|[78])/g, '')
  return text.split(/\r|\n/).filter((s) => s !== '')
}

t.test('the ETA is human time, and "--" while unknown (not cli-progress\'s "NULL" as "LLs")', async (t) => {
  t.equal(formatEta(7), '7s')
  t.equal(formatEta(65), '1m05s')
  t.equal(formatEta(3 * 3600 + 120), '3h02m')
  for (const unknown of ['NULL', 'INF', NaN, Infinity, -1]) t.equal(formatEta(unknown), '--', String(unknown))
})

t.test('the bar line counts in KiB/MiB, not raw bytes, and waits a second before an ETA', async (t) => {
  const early = formatProgress({ bar: '##--', value: 1536, total: 3 * 1024 * 1024, eta: 4, elapsedMs: 200 })
  t.equal(early, '[##--]   0% | 1.50 KiB of 3.00 MiB | ETA --')
  const later = formatProgress({ bar: '##--', value: 1.5 * 1024 * 1024, total: 3 * 1024 * 1024, eta: 75, elapsedMs: 5000 })
  t.equal(later, '[##--]  50% | 1.50 MiB of 3.00 MiB | ETA 1m15s')
  t.match(formatProgress({ bar: '', value: 0, total: 0, eta: 'NULL', elapsedMs: 0 }), /100%/, 'an empty tree is done')
})

/** A stream that says it is a terminal, recording what is written to it. */
function fakeTty() {
  let text = ''
  return {
    isTTY: true,
    columns: 100,
    write(s: string) {
      text += s
      return true
    },
    get text() {
      return text
    },
  }
}

t.test('-v with --progress on one terminal: the lines go above the bar, on the bar\'s stream', async (t) => {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < 4; i++) files[`file-${i}.bin`] = randomBytes(i + 1, 64 * 1024)
  const home = await tempTree(t, files)
  const server = await startServer(t, await tempTree(t))
  const tty = fakeTty()
  // One terminal: stdout and stderr both reach it. --bwlimit keeps the run long enough for the bar.
  const code = await main(['push', '-v', '--progress', '--bwlimit', '128', home, server.url], {
    stdout: tty,
    stderr: tty,
    env: { DSYNC_TOKEN: TOKEN },
    cwd: home,
    signal: new AbortController().signal,
  })
  t.equal(code, 0, tty.text)
  const segments = screenSegments(tty.text)
  t.ok(segments.some((s) => /^\[.*\] +\d+% \| [\d.]+ (B|KiB) of 256\.0 KiB \| ETA /.test(s)), 'the bar was drawn, in KiB')
  for (let i = 0; i < 4; i++) {
    const hits = segments.filter((s) => s.includes(`file-${i}.bin`))
    t.equal(hits.length, 1, `file-${i}.bin itemized once`)
    t.match(hits[0], new RegExp(`^new +file-${i}\\.bin`), 'on a line of its own, not across the bar')
  }
  t.match(tty.text, /4 files transferred/)
})

t.test('no bar when stderr is not a terminal (a log file), even with --progress', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha' })
  const server = await startServer(t, await tempTree(t))
  let out = ''
  let err = ''
  const code = await main(['push', '--progress', '--bwlimit', '1', home, server.url], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { DSYNC_TOKEN: TOKEN },
    cwd: home,
    signal: new AbortController().signal,
  })
  t.equal(code, 0, err)
  t.equal(err, '')
  t.match(out, /^1 file transferred; /)
})

// The real binary on a real pseudo-terminal (util-linux `script`), where stdout and stderr are
// the same terminal, as a user sees them.
const script = ['/usr/bin/script', '/bin/script'].find((p) => existsSync(p))
t.test('on a pseudo-terminal: the bar and the itemized lines do not overwrite each other', { skip: script === undefined && 'util-linux script is not installed' }, async (t) => {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < 3; i++) files[`pty-${i}.bin`] = randomBytes(i + 10, 64 * 1024)
  const home = await tempTree(t, files)
  const server = await startServer(t, await tempTree(t))
  const cmd = [process.execPath, BIN, 'push', '-v', '--progress', '--bwlimit', '96', home, server.url].map((a) => `'${a}'`).join(' ')
  const { stdout } = await promisify(execFile)(script!, ['-qec', cmd, '/dev/null'], {
    env: { ...process.env, DSYNC_TOKEN: TOKEN, COLUMNS: '100' },
    cwd: join(home, '..'),
  })
  const segments = screenSegments(stdout)
  t.ok(segments.some((s) => /\] +\d+% \| .* (B|KiB) of 192\.0 KiB \| ETA /.test(s)), 'the bar was drawn')
  for (let i = 0; i < 3; i++) {
    const hits = segments.filter((s) => s.includes(`pty-${i}.bin`))
    t.equal(hits.length, 1, `pty-${i}.bin itemized once`)
    t.match(hits[0], new RegExp(`^new +pty-${i}\\.bin`), 'at the start of its own line')
  }
  t.ok(segments.some((s) => /^3 files transferred/.test(s)), 'the outcome line after the bar is gone')
})
