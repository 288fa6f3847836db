import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { decodeSignature, blockSizeFor } from '../../src/delta/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { runBinary } from './support/run-binary.js'

const seed = randomBytes(1, 500000)

t.test('writes a signature file sized from the seed; relative paths are from the cwd', async (t) => {
  const dir = await tempTree(t, { 'seed.bin': seed })
  const r = await runBinary(['signature', 'seed.bin', 'seed.sig'], { cwd: dir })
  t.equal(r.code, 0, r.stderr)
  const sig = decodeSignature(await readFile(join(dir, 'seed.sig')))
  t.equal(sig.seedSize, seed.length)
  t.equal(sig.blockSize, blockSizeFor(seed.length))
  t.same((await readdir(dir)).sort(), ['seed.bin', 'seed.sig'], 'no temp file left')
})

t.test("'-' reads the seed from stdin and writes the signature to stdout; --block-size sets blocks", async (t) => {
  const dir = await tempTree(t)
  const r = await runBinary(['signature', '--block-size', '1k', '-', '-'], { cwd: dir, stdin: seed })
  t.equal(r.code, 0, r.stderr)
  const sig = decodeSignature(r.bytes)
  t.equal(sig.blockSize, 1024)
  t.equal(sig.seedSize, seed.length)
})

t.test('bad input: one line, documented exit code, the old SIGFILE untouched', async (t) => {
  const dir = await tempTree(t, { 'seed.bin': seed, 'old.sig': 'previous' })
  const cases: [string[], number, RegExp][] = [
    [['signature', 'missing', 'old.sig'], 3, /missing: no such file/],
    [['signature', '.', 'old.sig'], 3, /is a directory/],
    [['signature', '--block-size', '2G', 'seed.bin', 'old.sig'], 2, /at most/],
    [['signature', 'seed.bin'], 2, /missing required argument/],
    [['signature', 'seed.bin', join('nodir', 'x.sig')], 3, /no such file/],
  ]
  for (const [argv, code, msg] of cases) {
    const r = await runBinary(argv, { cwd: dir })
    t.equal(r.code, code, argv.join(' '))
    t.match(r.stderr, msg)
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  }
  t.equal(await readFile(join(dir, 'old.sig'), 'utf8'), 'previous')
})
