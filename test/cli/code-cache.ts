import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cacheDir, cacheFileFor, GENERATIONS, runCached } from '../../src/cli/code-cache.js'
import { tempTree } from '../support/temp.js'

// The code V8 compiled for the bundled CLI, kept between runs (src/cli/code-cache.ts): used when
// V8 takes it, rewritten while young, refused and rewritten when damaged, one file per command.
// Each run is its own process, as each dsync command is: within one process V8 would reuse what
// it compiled for the same source and never look at the cache file.

const CODE_CACHE = new URL('../../src/cli/code-cache.js', import.meta.url).href

/** A CommonJS script with a few functions to compile; `n` changes its bytes, not its length. */
const script = (n: number): string => `
const double = (x) => x * 2
function sum(xs) { let s = 0; for (const x of xs) s += double(x); return s }
exports.answer = () => sum([1, 2, 3, ${n}])
exports.file = __filename
exports.required = typeof require('node:path').join
`

/** Runs `file` through runCached in a new node process, then save(); what it saw. */
async function run(file: string, cache: string): Promise<{ cache: string; answer: number; file: string; required: string }> {
  const child = `
    const { runCached } = await import(${JSON.stringify(CODE_CACHE)})
    const run = runCached(${JSON.stringify(file)}, ${JSON.stringify(cache)})
    run.save()
    console.log(JSON.stringify({ cache: run.cache, answer: run.exports.answer(), file: run.exports.file, required: run.exports.required }))`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', child])
  return JSON.parse(stdout)
}

t.test('a script runs as Node would require it; its compiled code is used by the next runs while it is young, then kept', async (t) => {
  const dir = await tempTree(t)
  const file = join(dir, 'script.cjs')
  await writeFile(file, script(4))
  const cache = join(dir, 'cache', 'push-id.v8')
  const first = await run(file, cache)
  t.same(first, { cache: 'none', answer: 20, file, required: 'function' }, 'no cache file yet; __filename and require as in a module')
  t.equal((await readFile(cache)).at(-1), 1, 'written after its first run')
  t.equal(((await stat(join(dir, 'cache'))).mode & 0o777).toString(8), '700', 'the cache directory is the user\'s alone')
  for (let g = 2; g <= GENERATIONS; g++) {
    t.match(await run(file, cache), { cache: 'accepted', answer: 20 }, `run ${g}: V8 took the code`)
    t.equal((await readFile(cache)).at(-1), g, `rewritten after run ${g}`)
  }
  const settled = await readFile(cache)
  t.match(await run(file, cache), { cache: 'accepted', answer: 20 })
  t.same(await readFile(cache), settled, `after ${GENERATIONS} runs, no longer rewritten`)
})

t.test('a damaged cache file, or one V8 refuses, is not used: the script compiles from source, and the file is rewritten', async (t) => {
  const dir = await tempTree(t)
  const file = join(dir, 'script.cjs')
  await writeFile(file, script(4))
  const cache = join(dir, 'c.v8')
  await run(file, cache)
  const good = await readFile(cache)
  // V8 does not check its own data: these bytes overwritten crashed node (SIGSEGV) without ours.
  for (const [from, to, what] of [[24, 64, 'V8\'s data'], [0, 4, 'V8\'s header'], [good.length - 21, good.length - 1, 'the check'], [0, good.length, 'all of it (zeros)']] as const) {
    const damaged = Buffer.from(good)
    damaged.fill(what.includes('zeros') ? 0 : 0x5a, from, to)
    await writeFile(cache, damaged)
    t.match(await run(file, cache), { cache: 'rejected', answer: 20 }, `${what} damaged: not used, and the script runs`)
    t.match(await run(file, cache), { cache: 'accepted' }, 'rewritten: taken again')
  }
  await writeFile(cache, good.subarray(0, 100))
  t.match(await run(file, cache), { cache: 'rejected', answer: 20 }, 'a cut file: not used')
  await writeFile(cache, '')
  t.match(await run(file, cache), { cache: 'none', answer: 20 }, 'an empty file holds no code')

  // Another script, of another length: V8 sees the code is not this script's.
  const other = join(dir, 'other.cjs')
  await writeFile(other, script(4) + '\nexports.more = 1\n')
  await writeFile(cache, good)
  t.match(await run(other, cache), { cache: 'rejected', answer: 20 })
})

t.test('one file per command and build: a new build\'s file replaces the old one of its command only', async (t) => {
  const dir = await tempTree(t)
  const file = join(dir, 'script.cjs')
  await writeFile(file, script(4))
  const caches = join(dir, 'cache')
  t.equal(cacheFileFor(caches, 'b1', ['push', 'a', 'b']), join(caches, `push-b1-node${process.versions.node}-${process.arch}.v8`))
  t.equal(cacheFileFor(caches, 'b1', ['--version']), join(caches, `cli-b1-node${process.versions.node}-${process.arch}.v8`), 'no command: cli')
  t.equal(cacheFileFor(caches, 'b1', ['../../etc']), join(caches, `cli-b1-node${process.versions.node}-${process.arch}.v8`), 'never a path from argv')

  runCached(file, cacheFileFor(caches, 'b1', ['push'])).save()
  runCached(file, cacheFileFor(caches, 'b1', ['pull'])).save()
  t.same((await readdir(caches)).sort(), [`pull-b1-node${process.versions.node}-${process.arch}.v8`, `push-b1-node${process.versions.node}-${process.arch}.v8`])
  await writeFile(file, script(5))
  runCached(file, cacheFileFor(caches, 'b2', ['push'])).save()
  t.same((await readdir(caches)).sort(), [`pull-b1-node${process.versions.node}-${process.arch}.v8`, `push-b2-node${process.versions.node}-${process.arch}.v8`], 'push of b1 removed, pull kept')
})

t.test('a cache directory that cannot be written costs nothing but the cache', async (t) => {
  const dir = await tempTree(t)
  const file = join(dir, 'script.cjs')
  await writeFile(file, script(4))
  await writeFile(join(dir, 'not-a-dir'), 'x')
  const run = runCached<{ answer(): number }>(file, join(dir, 'not-a-dir', 'push.v8'))
  t.equal(run.exports.answer(), 20)
  t.doesNotThrow(() => run.save())
  t.same((await readdir(dir)).sort(), ['not-a-dir', 'script.cjs'], 'no temp file left')
})

t.test('where the cache lives: DSYNC_CACHE_DIR (empty: none), else XDG_CACHE_HOME/dsync, else ~/.cache/dsync', async (t) => {
  t.equal(cacheDir({ DSYNC_CACHE_DIR: '/x/y', XDG_CACHE_HOME: '/c' }), '/x/y')
  t.equal(cacheDir({ DSYNC_CACHE_DIR: '', XDG_CACHE_HOME: '/c' }), undefined)
  t.equal(cacheDir({ XDG_CACHE_HOME: '/c' }), '/c/dsync')
  t.equal(cacheDir({ XDG_CACHE_HOME: '' }), join(homedir(), '.cache', 'dsync'))
  t.equal(cacheDir({}), join(homedir(), '.cache', 'dsync'))
})

t.test('the real executable keeps its compiled code after a run that went well, not after a failed one', async (t) => {
  const bin = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))
  const caches = await tempTree(t)
  const run = (args: string[]) =>
    new Promise<number>((resolve) => execFile(process.execPath, [bin, ...args], { env: { ...process.env, DSYNC_CACHE_DIR: caches } }, (err) => resolve(typeof err?.code === 'number' ? err.code : 0)))
  // The bundle runs (and so keeps code) only when built after the last compile, as npm test leaves it.
  const mtime = async (u: URL): Promise<number | undefined> => (await stat(u).catch(() => undefined))?.mtimeMs
  const bundled = await mtime(new URL('../../bundle/build.json', import.meta.url))
  const built = [await mtime(new URL('../../.tsbuildinfo', import.meta.url)), await mtime(new URL('../../.tsbuildinfo-build', import.meta.url))].filter((x) => x !== undefined)
  const fresh = bundled !== undefined && built.every((x) => bundled > x)
  t.equal(await run(['push', 'only-one-arg']), 2, 'a usage error')
  t.same(await readdir(caches), [], 'nothing kept for a failed run')
  t.equal(await run(['--version']), 0)
  if (!fresh) {
    t.same(await readdir(caches), [], 'the modules ran: no cache')
    return
  }
  const { id } = JSON.parse(await readFile(new URL('../../bundle/build.json', import.meta.url), 'utf8')) as { id: string }
  const name = `cli-${id}-node${process.versions.node}-${process.arch}.v8`
  t.same(await readdir(caches), [name], '--version kept its code')
  t.equal((await readFile(join(caches, name))).at(-1), 1)
  t.equal(await run(['--version']), 0)
  t.equal((await readFile(join(caches, name))).at(-1), 2, 'the next run took it (and wrote it once more)')
})
