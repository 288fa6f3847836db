import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { chmod, mkdir, readdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { cacheDir, commandOf, GENERATIONS, runCached } from '../../src/cli/code-cache.js'
import { BUNDLED_CLI, bundleIsFresh } from '../support/cli.js'
import { tempTree } from '../support/temp.js'

// The code V8 compiled for the bundled CLI, kept between runs (src/cli/code-cache.ts): used when
// V8 takes it, rewritten while young, refused and rewritten when damaged, one file per command
// and build, and only from a directory and a file of this user. Each run is its own process, as
// each dsync command is: within one process V8 would reuse what it compiled for the same source
// and never look at the cache file.

const CODE_CACHE = new URL('../../src/cli/code-cache.js', import.meta.url).href
const NODE = `node${process.versions.node}-${process.arch}`

/** A CommonJS script with a few functions to compile, of build `id` (bin/bundle.js's last line);
 *  `n` changes its bytes, not its length. */
const script = (n: number, id = '0123456789abcdef'): string => `
const double = (x) => x * 2
function sum(xs) { let s = 0; for (const x of xs) s += double(x); return s }
exports.answer = () => sum([1, 2, 3, ${n}])
exports.file = __filename
exports.required = typeof require('node:path').join
//# dsync-build ${id}
`

/** Runs `file` through runCached in a new node process, then save(); what it saw. */
async function run(file: string, dir: string | undefined, command = 'push'): Promise<{ cache: string; answer: number; file: string; required: string }> {
  const child = `
    const { runCached } = await import(${JSON.stringify(CODE_CACHE)})
    const run = runCached(${JSON.stringify(file)}, ${JSON.stringify(dir)}, ${JSON.stringify(command)})
    run.save()
    console.log(JSON.stringify({ cache: run.cache, answer: run.exports.answer(), file: run.exports.file, required: run.exports.required }))`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', child])
  return JSON.parse(stdout)
}

async function setUp(t: Test): Promise<{ dir: string; file: string; caches: string; cache: string }> {
  const dir = await tempTree(t)
  const file = join(dir, 'script.cjs')
  await writeFile(file, script(4))
  const caches = join(dir, 'cache')
  return { dir, file, caches, cache: join(caches, `push-0123456789abcdef-${NODE}.v8`) }
}

t.test('a script runs as Node would require it; its compiled code is used by the next runs while it is young, then kept', async (t) => {
  const { dir, file, caches, cache } = await setUp(t)
  const first = await run(file, caches)
  t.same(first, { cache: 'none', answer: 20, file, required: 'function' }, 'no cache file yet; __filename and require as in a module')
  t.equal((await readFile(cache)).at(-1), 1, 'written after its first run')
  t.equal(((await stat(join(dir, 'cache'))).mode & 0o777).toString(8), '700', 'the cache directory is the user\'s alone')
  t.equal(((await stat(cache)).mode & 0o777).toString(8), '600')
  for (let g = 2; g <= GENERATIONS; g++) {
    t.match(await run(file, caches), { cache: 'accepted', answer: 20 }, `run ${g}: V8 took the code`)
    t.equal((await readFile(cache)).at(-1), g, `rewritten after run ${g}`)
  }
  const settled = await readFile(cache)
  t.match(await run(file, caches), { cache: 'accepted', answer: 20 })
  t.same(await readFile(cache), settled, `after ${GENERATIONS} runs, no longer rewritten`)
  t.match(await run(file, undefined), { cache: 'none', answer: 20 }, 'no cache directory: no cache')
})

t.test('the CommonJS files it requires from node_modules keep their code in the same file: under their path and source, so a package changed in place compiles afresh', async (t) => {
  const { dir, caches, cache } = await setUp(t)
  const pkg = join(dir, 'node_modules', 'pkg')
  await mkdir(pkg, { recursive: true })
  const lib = (n: number): string => `const { helper } = require('./helper.js')
exports.value = () => helper(${n})
exports.where = [__filename, __dirname, this === module.exports, require.resolve('./helper.js'), module.children.map((m) => m.id)]
`
  await writeFile(join(pkg, 'index.js'), lib(5))
  await writeFile(join(pkg, 'helper.js'), 'exports.helper = (x) => x * 10\n')
  const file = join(dir, 'uses.cjs')
  await writeFile(file, `const pkg = require('pkg')\nexports.answer = () => pkg.value()\nexports.where = pkg.where\n//# dsync-build 0123456789abcdef\n`)
  const go = async (): Promise<{ cache: string; answer: number; where: unknown[]; required: { files: number; accepted: number } }> => {
    const child = `
      const { runCached } = await import(${JSON.stringify(CODE_CACHE)})
      const run = runCached(${JSON.stringify(file)}, ${JSON.stringify(caches)}, 'push')
      const out = { cache: run.cache, answer: run.exports.answer(), where: run.exports.where, required: run.required() }
      run.save()
      console.log(JSON.stringify(out))`
    return JSON.parse((await promisify(execFile)(process.execPath, ['--input-type=module', '-e', child])).stdout)
  }
  const first = await go()
  const helper = join(pkg, 'helper.js')
  t.same(first, { cache: 'none', answer: 50, where: [join(pkg, 'index.js'), pkg, true, helper, [helper]], required: { files: 2, accepted: 0 } }, 'run as Node runs a module: its own __filename, __dirname, this, require and children')
  for (let g = 2; g <= GENERATIONS; g++) t.match(await go(), { cache: 'accepted', answer: 50, required: { files: 2, accepted: 2 } }, `run ${g} takes the code of both files`)
  const settled = await readFile(cache)
  t.equal(settled.at(-1), GENERATIONS)
  t.match(await go(), { required: { files: 2, accepted: 2 } })
  t.ok((await readFile(cache)).equals(settled), 'then the file is kept as it is while every file takes its code')
  // Same length, other bytes: V8 alone would take the old code for it (it checks the length).
  await writeFile(join(pkg, 'index.js'), lib(7))
  t.match(await go(), { cache: 'accepted', answer: 70, required: { files: 2, accepted: 1 } }, 'a file changed in place compiles afresh and runs its new source')
  t.notOk((await readFile(cache)).equals(settled), 'and the cache file is rewritten, old as it is')
  t.match(await go(), { answer: 70, required: { files: 2, accepted: 2 } }, 'its new code is kept from then on')
})

t.test('what Node must compile itself still runs: ES modules, a #! line, an import(); and runs that require different files keep the code of both', async (t) => {
  const { dir, caches, cache } = await setUp(t)
  const nm = join(dir, 'node_modules')
  const files: Record<string, string> = {
    'esm/package.json': '{"type":"module","exports":"./index.js"}',
    'esm/index.js': 'export const kind = "esm"\n',
    'bang/index.js': '#!/usr/bin/env node\nexports.kind = "bang"\n',
    'dyn/index.js': 'exports.kind = "dyn"\nexports.load = () => import("node:path").then((m) => typeof m.join)\n',
    'a/index.js': 'exports.kind = "a"\n',
    'b/index.js': 'exports.kind = "b"\n',
  }
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(join(nm, rel, '..'), { recursive: true })
    await writeFile(join(nm, rel), text)
  }
  const file = join(dir, 'uses.cjs')
  // require() of an ES module: Node 20.19 on (process.features.require_module); before, an error.
  const esm = (process.features as { require_module?: boolean }).require_module === true
  await writeFile(file, `exports.kinds = () => [${esm ? "require('esm').kind, " : ''}require('bang').kind, require('dyn').kind, require(process.env.WHICH).kind]
exports.load = () => require('dyn').load()
//# dsync-build 0123456789abcdef\n`)
  const go = async (which: string): Promise<{ kinds: string[]; loaded: string; required: { files: number; accepted: number } }> => {
    const child = `
      const { runCached } = await import(${JSON.stringify(CODE_CACHE)})
      const run = runCached(${JSON.stringify(file)}, ${JSON.stringify(caches)}, 'push')
      const out = { kinds: run.exports.kinds(), loaded: await run.exports.load(), required: run.required() }
      run.save()
      console.log(JSON.stringify(out))`
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', child], { env: { ...process.env, WHICH: which } })
    return JSON.parse(stdout)
  }
  // Only a/ or b/ compiles here: the others are Node's (an ES module, a #! line, an import()).
  const kinds = (which: string): string[] => [...(esm ? ['esm'] : []), 'bang', 'dyn', which]
  t.same(await go('a'), { kinds: kinds('a'), loaded: 'function', required: { files: 1, accepted: 0 } }, 'each runs, through Node where it must')
  t.match(await go('b'), { kinds: kinds('b'), required: { files: 1, accepted: 0 } })
  t.match(await go('a'), { required: { files: 1, accepted: 1 } }, 'a\'s code was kept through b\'s run')
  t.match(await go('b'), { required: { files: 1, accepted: 1 } }, 'and b\'s through a\'s')
  for (let i = 0; i < GENERATIONS; i++) await go(i % 2 === 0 ? 'a' : 'b')
  const settled = await readFile(cache)
  await go('a')
  await go('b')
  t.ok((await readFile(cache)).equals(settled), 'no longer rewritten in turn')
})

t.test('a damaged cache file, or one V8 refuses, is not used: the script compiles from source, and the file is rewritten', async (t) => {
  const { file, caches, cache } = await setUp(t)
  await run(file, caches)
  const good = await readFile(cache)
  // V8 does not check its own data: these bytes overwritten crashed node (SIGSEGV) without ours.
  for (const [from, to, what] of [[24, 64, 'V8\'s data'], [0, 4, 'V8\'s header'], [good.length - 21, good.length - 1, 'the check'], [0, good.length, 'all of it (zeros)']] as const) {
    const damaged = Buffer.from(good)
    damaged.fill(what.includes('zeros') ? 0 : 0x5a, from, to)
    await writeFile(cache, damaged)
    t.match(await run(file, caches), { cache: 'rejected', answer: 20 }, `${what} damaged: not used, and the script runs`)
    t.match(await run(file, caches), { cache: 'accepted' }, 'rewritten: taken again')
  }
  await writeFile(cache, good.subarray(0, 100))
  t.match(await run(file, caches), { cache: 'rejected', answer: 20 }, 'a cut file: not used')
  await writeFile(cache, '')
  t.match(await run(file, caches), { cache: 'none', answer: 20 }, 'an empty file holds no code')

  // Another script of the same build id (a hand-made one) and another length: V8 sees the code
  // is not this script's.
  await writeFile(file, script(4).replace('exports.file', '\nexports.file'))
  await writeFile(cache, good)
  t.match(await run(file, caches), { cache: 'rejected', answer: 20 })
})

t.test('only a directory of this user that no one else may write, and a regular file of this user, not through a symlink', async (t) => {
  const { dir, file, caches, cache } = await setUp(t)
  await run(file, caches)
  await run(file, caches)
  t.match(await run(file, caches), { cache: 'accepted' })
  const good = await readFile(cache)

  await chmod(caches, 0o770)
  t.match(await run(file, caches), { cache: 'none', answer: 20 }, 'a group-writable directory: not read')
  t.same(await readFile(cache), good, 'nor written')
  await chmod(caches, 0o700)
  await chmod(cache, 0o666)
  t.match(await run(file, caches), { cache: 'none', answer: 20 }, 'a cache file others may write: not read')
  await chmod(cache, 0o600)

  const elsewhere = join(dir, 'elsewhere')
  await mkdir(elsewhere, { mode: 0o700 })
  await writeFile(join(elsewhere, 'code.v8'), good)
  const other = join(dir, 'other-cache')
  await mkdir(other, { mode: 0o700 })
  await symlink(join(elsewhere, 'code.v8'), join(other, `push-0123456789abcdef-${NODE}.v8`))
  t.match(await run(file, other), { cache: 'none', answer: 20 }, 'a cache file that is a symlink: not followed')
  t.same(await readFile(join(elsewhere, 'code.v8')), good, 'and what it points to is not written either')

  await symlink(caches, join(dir, 'linked-cache'))
  t.match(await run(file, join(dir, 'linked-cache')), { cache: 'none', answer: 20 }, 'a cache directory that is a symlink: not used')

  if (process.geteuid?.() === 0) {
    // As root, a directory of another user (a `sudo -E` run in that user's home): not used.
    const theirs = join(dir, 'theirs')
    await mkdir(theirs, { mode: 0o700 })
    await writeFile(join(theirs, `push-0123456789abcdef-${NODE}.v8`), good)
    const { chown } = await import('node:fs/promises')
    await chown(theirs, 12345, 12345)
    t.match(await run(file, theirs), { cache: 'none', answer: 20 }, 'another user\'s directory: not read')
    t.same(await readdir(theirs), [`push-0123456789abcdef-${NODE}.v8`], 'nor written')
    // Nor made in another user's home: root's folders there would shut the user out of them.
    const home = join(dir, 'home')
    await mkdir(home, { mode: 0o755 })
    await chown(home, 12345, 12345)
    t.match(await run(file, join(home, '.cache', 'dsync')), { cache: 'none', answer: 20 })
    t.same(await readdir(home), [], 'no .cache made in another user\'s home')
  }
})

t.test('one file per command and build: a new build\'s file replaces the old one of its command only, and stale temp files go', async (t) => {
  const { file, caches } = await setUp(t)
  await run(file, caches, 'push')
  await run(file, caches, 'pull')
  await writeFile(join(caches, `push-fedcba9876543210-node0.0.0-${process.arch}.v8`), 'another Node\'s')
  await writeFile(join(caches, 'push-notes.v8'), 'not ours')
  const stale = join(caches, `push-0123456789abcdef-${NODE}.v8.0a0b0c0d0e0f.tmp`)
  await writeFile(stale, 'a writer that died')
  await utimes(stale, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000))
  const fresh = join(caches, `pull-0123456789abcdef-${NODE}.v8.0a0b0c0d0e1f.tmp`)
  await writeFile(fresh, 'a writer at work')
  await writeFile(file, script(5, '1111222233334444'))
  await run(file, caches, 'push')
  t.same(
    (await readdir(caches)).sort(),
    [
      `pull-0123456789abcdef-${NODE}.v8`,
      `pull-0123456789abcdef-${NODE}.v8.0a0b0c0d0e1f.tmp`,
      `push-1111222233334444-${NODE}.v8`,
      `push-fedcba9876543210-node0.0.0-${process.arch}.v8`,
      'push-notes.v8',
    ],
    'push of the old build removed, and the stale temp file; pull, another Node\'s and a file not named by dsync kept',
  )
})

t.test('a cache directory that cannot be written costs nothing but the cache; a script without a build id runs without one', async (t) => {
  const { dir, file } = await setUp(t)
  await writeFile(join(dir, 'not-a-dir'), 'x')
  t.match(await run(file, join(dir, 'not-a-dir')), { cache: 'none', answer: 20 })
  t.same((await readdir(dir)).sort(), ['not-a-dir', 'script.cjs'], 'no temp file left')
  await writeFile(file, script(4).replace(/\/\/# dsync-build .*\n/, ''))
  t.match(await run(file, join(dir, 'c')), { cache: 'none', answer: 20 })
  t.same((await readdir(dir)).sort(), ['not-a-dir', 'script.cjs'], 'no cache written')
})

t.test('where the cache lives: DSYNC_CACHE_DIR (empty: none), else XDG_CACHE_HOME/dsync, else ~/.cache/dsync; only absolute paths', async (t) => {
  t.equal(cacheDir({ DSYNC_CACHE_DIR: '/x/y', XDG_CACHE_HOME: '/c' }), '/x/y')
  t.equal(cacheDir({ DSYNC_CACHE_DIR: '', XDG_CACHE_HOME: '/c' }), undefined)
  t.equal(cacheDir({ DSYNC_CACHE_DIR: 'rel/dir' }), undefined, 'a relative DSYNC_CACHE_DIR: none')
  t.equal(cacheDir({ XDG_CACHE_HOME: '/c' }), '/c/dsync')
  t.equal(cacheDir({ XDG_CACHE_HOME: 'rel' }), join(homedir(), '.cache', 'dsync'), 'a relative XDG_CACHE_HOME is ignored, as the spec says')
  t.equal(cacheDir({}), join(homedir(), '.cache', 'dsync'))
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', `const { cacheDir } = await import(${JSON.stringify(CODE_CACHE)}); console.log(JSON.stringify(cacheDir(process.env) ?? null))`], {
    env: { PATH: process.env.PATH ?? '', HOME: '' },
  })
  t.equal(JSON.parse(stdout), null, 'an empty HOME: none (not .cache in the current directory)')
})

t.test('the command a run is kept under: its name, or cli for a help, the version, or no command', async (t) => {
  t.equal(commandOf(['push', 'a', 'ws://x']), 'push')
  t.equal(commandOf(['push', '--help']), 'cli')
  t.equal(commandOf(['help', 'push']), 'help')
  t.equal(commandOf(['-V']), 'cli')
  t.equal(commandOf(['push', 'a', 'b', '--', '--help']), 'push', 'after --, an argument')
  t.equal(commandOf(['../../etc']), 'cli', 'never a path from argv')
  t.equal(commandOf([]), 'cli')
})

t.test('the real executable: a strict script, which keeps its compiled code after a run that went well, not after a failed one', async (t) => {
  const bin = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))
  const caches = await tempTree(t)
  const exec = (args: string[]) =>
    new Promise<number>((resolve) => execFile(process.execPath, [bin, ...args], { env: { ...process.env, DSYNC_CACHE_DIR: caches } }, (err) => resolve(typeof err?.code === 'number' ? err.code : 0)))
  // The bundle runs (and so keeps code) only when built after the last compile, as npm test leaves it.
  const fresh = await bundleIsFresh()
  t.equal(await exec(['push', 'only-one-arg']), 2, 'a usage error')
  t.same(await readdir(caches), [], 'nothing kept for a failed run')
  t.equal(await exec(['--version']), 0)
  if (!fresh) {
    t.same(await readdir(caches), [], 'the modules ran: no cache')
    return
  }
  const text = await readFile(BUNDLED_CLI, 'utf8')
  t.ok(text.startsWith("'use strict';"), 'the bundle is strict, as the ES modules it holds')
  const id = /\/\/# dsync-build ([0-9a-f]{16})\n$/.exec(text)?.[1]
  t.ok(id, 'and names its build on its last line')
  const name = `cli-${id}-${NODE}.v8`
  t.same(await readdir(caches), [name], '--version kept its code')
  t.equal((await readFile(join(caches, name))).at(-1), 1)
  t.equal(await exec(['--version']), 0)
  t.equal((await readFile(join(caches, name))).at(-1), 2, 'the next run took it (and wrote it once more)')
})

t.test('a command that is not a plain word is refused: it names a file', async (t) => {
  const { file, caches } = await setUp(t)
  t.throws(() => runCached(file, caches, '../x'), TypeError)
  t.throws(() => runCached(file, caches, 'a-b'), TypeError)
})
