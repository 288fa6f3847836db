/**
 * Runs the bundled CLI (bin/bundle.js: dist/bundle/dsync.cjs, one CommonJS script) with the code
 * V8 compiled for it in earlier runs, kept in the user's cache directory. bin/dsync.js uses it
 * when the bundle is fresh, as dist/bundle/launch.cjs (this module bundled as CommonJS by
 * bin/bundle.js); nothing else loads this module, and it loads only Node's.
 *
 * Why (issue 8): most of a small push is starting. V8 parses ~0.6 MB of JavaScript and compiles
 * each function the first time it runs, in every process. Given the code of an earlier run, it
 * does neither. By hand, a no-op push of 10 files (10 runs each, in turns, one server): 333 ms
 * wall with the bundle as ES modules, 307 ms as this script without a cache, 258 ms with it
 * (bench/README.md "Startup"). Node 20 can keep V8's code for a script (vm.Script's cachedData)
 * but not for ES modules (module.enableCompileCache came with Node 22), hence one script.
 *
 * One cache file per command (`push`, `serve`, … `cli` for --version and the helps): each holds
 * the functions its command ran, and --version does not load push's. Written after a run that
 * ended well (exit 0) while the file is missing, damaged, refused by V8 (another Node, other V8
 * flags) or young: rewritten after each of its first GENERATIONS runs, since a first push of new
 * files compiles other functions than the pushes of edits that follow. Files of other builds of
 * the same command (same Node) are removed as a new one is written.
 *
 * The file holds the code of the packages the bundle requires from node_modules too (lmdb,
 * msgpackr, zstd-wasm and what they require: 22 CommonJS files for a push, which Node 20 compiles
 * afresh in every process), each under the SHA-1 of its path and source, so that a package
 * updated in place compiles afresh (and the file is rewritten). By hand, a no-op push of 10 files
 * (15 runs each, in turns, one server each): 294 ms wall and 290 ms CPU with the bundle's code
 * alone, 267 and 263 ms with the packages' too.
 *
 * A cache file is code this process will run: it is used only from an absolute directory that
 * this user owns and no one else may write, only as a regular file of this user that no one
 * else may write (never through a symlink), and only when its SHA-1 matches (V8 does not check
 * its own data: a damaged file crashed node). Anything else, and the script is compiled from
 * source as without a cache. The directory is made only under a folder of this user (or /tmp),
 * never in another user's home. No cache on Windows, where none of this can be checked.
 */
import { isAscii } from 'node:buffer'
import { randomBytes, createHash } from 'node:crypto'
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, type Stats } from 'node:fs'
import { createRequire, Module } from 'node:module'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, sep } from 'node:path'
import { Script } from 'node:vm'

/** Runs after which a cache file is no longer rewritten (its last byte counts them). */
export const GENERATIONS = 3

/** Largest cache file read: a push's is ~0.7 MB. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024

/** A temp file this old is a writer's that died before its rename. */
const STALE_TEMP_MS = 10 * 60 * 1000

/** A command's name, as it may appear in a cache file's name (never a path). */
const COMMAND = /^[a-z]{1,16}$/

/** The end of a cache file's name, after `command-buildid`: the code is this Node's, on this arch. */
const NODE_SUFFIX = `-node${process.versions.node}-${process.arch}.v8`

/** What became of the cache for this run. */
export type CacheUse = 'none' | 'accepted' | 'rejected'

export interface CachedRun<T> {
  /** The script's `module.exports`. */
  readonly exports: T
  /** 'none': no cache file, or no cache directory to use; 'accepted': V8 used it; 'rejected':
   *  damaged (its check failed), or V8 refused it; the script was compiled from source. */
  readonly cache: CacheUse
  /** The CommonJS files of node_modules required so far (with a cache directory to use), and
   *  how many of them V8 took kept code for. */
  required(): { readonly files: number; readonly accepted: number }
  /** Writes this run's compiled code for the next runs when the file is missing, refused or
   *  young (see the module's comment); else nothing. Never throws: a cache is only a help. */
  save(): void
}

/**
 * Where dsync keeps its cache: DSYNC_CACHE_DIR when set (empty: no cache), else
 * $XDG_CACHE_HOME/dsync, else ~/.cache/dsync. Undefined when there is none to use: each must be
 * an absolute path (a relative one would put code to run in whatever directory dsync runs in,
 * often a synced tree; the XDG spec ignores relative ones too).
 */
export function cacheDir(env: NodeJS.ProcessEnv): string | undefined {
  // Windows: no owner to check a directory or a file against, nor O_NOFOLLOW; no cache there.
  if (process.platform === 'win32') return undefined
  const absolute = (p: string | undefined): string | undefined => (p !== undefined && isAbsolute(p) ? p : undefined)
  if (env.DSYNC_CACHE_DIR !== undefined) return absolute(env.DSYNC_CACHE_DIR)
  const xdg = absolute(env.XDG_CACHE_HOME)
  if (xdg !== undefined) return join(xdg, 'dsync')
  let home: string | undefined
  try {
    home = absolute(env.HOME ?? homedir())
  } catch {
    // Policy: no home directory (a system user without one): run without a cache.
  }
  return home === undefined ? undefined : join(home, '.cache', 'dsync')
}

/** The command a run's code is kept under: argv[0] when it is a word, else `cli`; `cli` too for
 *  a help or the version, which run none of their command's code. */
export function commandOf(argv: readonly string[]): string {
  const end = argv.indexOf('--')
  const opts = end < 0 ? argv : argv.slice(0, end)
  if (opts.some((a) => a === '-h' || a === '--help' || a === '-V' || a === '--version')) return 'cli'
  return COMMAND.test(argv[0] ?? '') ? argv[0]! : 'cli'
}

/**
 * Runs the CommonJS script `file` as Node would require it, with the code kept for `command` in
 * `dir` when V8 takes it. The script names its build on its last line (`//# dsync-build ID`,
 * bin/bundle.js): V8 checks its own version, its flags and the source's length, not the
 * source's bytes, so the build's id is in the cache file's name. No id, or no `dir`: no cache.
 */
export function runCached<T>(file: string, dir: string | undefined, command: string): CachedRun<T> {
  if (!COMMAND.test(command)) throw new TypeError(`runCached: command must match ${COMMAND}, got ${JSON.stringify(command)}`)
  // bin/bundle.js makes the bundle all ASCII: read so, it is a one-byte string copied as it is
  // (~2 ms less than decoding it as UTF-8, by hand); any other script is decoded as UTF-8.
  const bytes = readFileSync(file)
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
  const id = /\/\/# dsync-build ([0-9a-f]{16})\s*$/.exec(source.slice(-64))?.[1]
  const usable = dir !== undefined && id !== undefined && ownDirectory(dir) !== 'unsafe'
  const name = id === undefined ? '' : `${command}-${id}${NODE_SUFFIX}`
  const kept = usable ? unpack(readOwnFile(join(dir, name))) : { codes: new Map<string, Buffer>(), generation: 0, damaged: false }
  const cachedData = kept.codes.get(BUNDLE_KEY)
  const { script, took } = compileWrapped(source, file, cachedData)
  const cache: CacheUse = kept.damaged ? 'rejected' : cachedData === undefined ? 'none' : took ? 'accepted' : 'rejected'
  const required = usable ? keepRequired(kept.codes) : undefined
  const module = { exports: {} as T }
  runWrapped(script, module, createRequire(file), file)
  return {
    exports: module.exports,
    cache,
    required: () => required?.counts() ?? { files: 0, accepted: 0 },
    save() {
      if (required === undefined) return // no cache to use
      const settled = cache === 'accepted' && kept.generation >= GENERATIONS && !required.compiledAfresh()
      if (settled) return
      write(dir!, command, name, () => pack([[BUNDLE_KEY, script.createCachedData()], ...required.codes()], cache === 'accepted' ? kept.generation + 1 : 1))
    },
  }
}

/** `source` compiled as Node wraps a CommonJS module, from `cachedData` when given and V8 takes
 *  it (`took`). */
function compileWrapped(source: string, filename: string, cachedData: Buffer | undefined): { script: Script; took: boolean } {
  const script = new Script(Module.wrap(source), { filename, ...(cachedData !== undefined && { cachedData }) })
  return { script, took: cachedData !== undefined && script.cachedDataRejected !== true }
}

/** Runs a module compiled by compileWrapped as Node does: its wrapper called on `module.exports`. */
function runWrapped(script: Script, module: { exports: unknown }, require: NodeJS.Require, filename: string): unknown {
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: { exports: unknown }, filename: string, dirname: string) => unknown
  return wrapper.call(module.exports, module.exports, require, module, filename, dirname(filename))
}

/** The bundle's entry in a cache file (the packages' are SHA-1s: keepRequired). */
const BUNDLE_KEY = '0'.repeat(40)

/** Node's internals a CommonJS module's `require` is made of (Module.prototype.require and
 *  these are what Node's own makeRequireFunction uses). */
interface NodeModuleStatics {
  _resolveFilename(request: string, parent: NodeJS.Module, isMain: boolean, options?: { paths?: string[] }): string
  _resolveLookupPaths(request: string, parent: NodeJS.Module): string[] | null
  _extensions: NodeJS.RequireExtensions
  _cache: NodeJS.Dict<NodeJS.Module>
}

/**
 * From now on, the CommonJS files this process requires from a node_modules folder compile with
 * the code in `codes` (by moduleKey) when V8 takes it. Node's own loader compiles and runs
 * everything else: files elsewhere, ES modules (`format` 'module'), a file with a `#!` line or
 * an `import()` (a script of vm has no loader for it), a source vm.Script will not compile (Node
 * then says why, or detects ES module syntax), and every file under a policy
 * (--experimental-policy checks a file's integrity as it compiles). A file compiled here runs as
 * Node runs it: the wrapper called on `module.exports` with a `require` made as Node makes it.
 * Returns what the files compiled here hold, for the cache file, and whether any had no code V8
 * took (a package updated, or required for the first time): the file is then rewritten.
 */
function keepRequired(codes: ReadonlyMap<string, Buffer>): { codes(): Map<string, Buffer>; compiledAfresh(): boolean; counts(): { files: number; accepted: number } } {
  const loaded = new Map<string, Script>()
  let accepted = 0
  const statics = Module as unknown as NodeModuleStatics
  const proto = Module.prototype as unknown as { _compile(this: NodeJS.Module, content: string, filename: string, format?: string): unknown }
  const nodeCompile = proto._compile
  const underPolicy = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) => a.startsWith('--experimental-policy'))
  if (underPolicy) return { codes: () => new Map(), compiledAfresh: () => false, counts: () => ({ files: 0, accepted: 0 }) }
  proto._compile = function (content, filename, format) {
    const byNode = (): unknown => nodeCompile.call(this, content, filename, format)
    if (format === 'module' || !filename.includes(`${sep}node_modules${sep}`) || content.startsWith('#!') || content.includes('import(')) return byNode()
    const key = moduleKey(filename, content)
    let compiled: { script: Script; took: boolean }
    try {
      compiled = compileWrapped(content, filename, codes.get(key))
    } catch {
      // Policy: Node's own loader compiles it, and says what is wrong with it if anything is.
      return byNode()
    }
    if (compiled.took) accepted++
    loaded.set(key, compiled.script)
    const mod = this
    const require = ((id: string) => mod.require(id)) as NodeJS.Require
    require.resolve = Object.assign((request: string, options?: { paths?: string[] }) => statics._resolveFilename(request, mod, false, options), {
      paths: (request: string) => statics._resolveLookupPaths(request, mod),
    })
    require.main = process.mainModule
    require.extensions = statics._extensions
    require.cache = statics._cache
    return runWrapped(compiled.script, mod, require, filename)
  }
  return {
    // The earlier runs' entries too (up to CARRIED_BYTES), for files this run did not require:
    // runs that require different files (xxhash-addon only on some paths) would otherwise
    // rewrite the file in turn, each without the other's.
    codes: () => {
      const out = new Map<string, Buffer>()
      for (const [key, script] of loaded) out.set(key, script.createCachedData())
      let carried = 0
      for (const [key, data] of codes) {
        if (key === BUNDLE_KEY || out.has(key) || (carried += data.length) > CARRIED_BYTES) continue
        out.set(key, data)
      }
      return out
    },
    compiledAfresh: () => accepted < loaded.size,
    counts: () => ({ files: loaded.size, accepted }),
  }
}

/** Bytes of code a cache file keeps for required files its last run did not require. */
const CARRIED_BYTES = 8 * 1024 * 1024

/** A required file's entry: the SHA-1 of its path and its source. V8 checks a source's length
 *  against its code, not its bytes. */
function moduleKey(filename: string, content: string): string {
  return createHash('sha1').update(filename).update('\0').update(content).digest('hex')
}

/** 'ours': a directory of this user that no one else may write; 'missing'; else 'unsafe' (used
 *  neither to read nor to write). Where there are no user ids (Windows), any directory. */
function ownDirectory(dir: string): 'ours' | 'missing' | 'unsafe' {
  let st
  try {
    st = lstatSync(dir)
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unsafe'
  }
  return st.isDirectory() && ownedHere(st) ? 'ours' : 'unsafe'
}

/** Whether this user owns the entry and no one else may write it (any, where there are no user
 *  ids: Windows). */
function ownedHere(st: Stats): boolean {
  return (process.geteuid === undefined || st.uid === process.geteuid()) && (st.mode & 0o022) === 0
}

/** The bytes of a regular file of this user that no one else may write, read without following
 *  a symlink or blocking on a FIFO; undefined when there is none such (or it is larger than any
 *  cache file). */
function readOwnFile(path: string): Buffer | undefined {
  let fd: number | undefined
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0))
    const st = fstatSync(fd)
    if (!st.isFile() || st.size > MAX_CACHE_BYTES || !ownedHere(st)) return undefined
    return readFileSync(fd)
  } catch {
    // Policy: no cache file yet (or one that cannot be read): compile from source.
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** A cache file's first bytes: its format (1: the bundle's code alone, with no header). */
const FORMAT = Buffer.from('dsc\x02', 'latin1')

/** Bytes of the file's check: the SHA-1 of what comes before it. */
const CHECK_BYTES = 20

/** Bytes of an entry's key (a SHA-1, or the bundle's zeros) and of its length. */
const KEY_BYTES = 20
const LENGTH_BYTES = 4

/**
 * A cache file: FORMAT, then entries of V8's data, each after its key (the bundle's zeros, or a
 * required file's moduleKey) and its length, then the SHA-1 of all of that, and a byte counting
 * the runs that wrote the file. The check is ours because V8 (Node 20) does not check its data's
 * checksum: by hand, a cache file with 40 bytes of its data overwritten crashed node (SIGSEGV) in
 * `new Script`, and would have at every run until deleted; a file left zero-filled by a crash
 * would do the same. SHA-1 as a checksum against damage (who could write a crafted file is kept
 * out by the directory's and the file's owner checks): ~0.7 ms for the ~700 KB of a push's code
 * here, faster than MD5 or, on CPUs without SHA instructions, SHA-256.
 */
function pack(entries: readonly (readonly [string, Buffer])[], generation: number): Buffer {
  const parts = [FORMAT, ...entries.flatMap(([key, data]) => {
    const head = Buffer.alloc(KEY_BYTES + LENGTH_BYTES)
    head.write(key, 'hex')
    head.writeUInt32LE(data.length, KEY_BYTES)
    return [head, data]
  })]
  const body = Buffer.concat(parts)
  return Buffer.concat([body, createHash('sha1').update(body).digest(), Buffer.of(Math.min(generation, 255))])
}

function unpack(stored: Buffer | undefined): { codes: Map<string, Buffer>; generation: number; damaged: boolean } {
  const codes = new Map<string, Buffer>()
  if (stored === undefined || stored.length <= CHECK_BYTES + 1) return { codes, generation: 0, damaged: stored !== undefined && stored.length > 0 }
  const body = stored.subarray(0, stored.length - CHECK_BYTES - 1)
  const check = stored.subarray(body.length, body.length + CHECK_BYTES)
  if (!createHash('sha1').update(body).digest().equals(check) || !body.subarray(0, FORMAT.length).equals(FORMAT)) return { codes, generation: 0, damaged: true }
  for (let at = FORMAT.length; at < body.length; ) {
    // Checked whole above: a short entry is a bug of the writer, not damage; still, read none past the end.
    if (at + KEY_BYTES + LENGTH_BYTES > body.length) return { codes: new Map(), generation: 0, damaged: true }
    const key = body.toString('hex', at, at + KEY_BYTES)
    const length = body.readUInt32LE(at + KEY_BYTES)
    at += KEY_BYTES + LENGTH_BYTES
    if (at + length > body.length) return { codes: new Map(), generation: 0, damaged: true }
    codes.set(key, body.subarray(at, at + length))
    at += length
  }
  return { codes, generation: stored[stored.length - 1]!, damaged: false }
}

/**
 * Writes the cache file whole: a new temp file of this process (never one that exists, nor
 * through a symlink), renamed over the old file, so a reader sees the old file or the new one.
 * The directory is made (0700) and checked first, and the temp file opened, before the code is
 * serialized: where nothing can be written, a run pays nothing for it. Then the command's files
 * of other builds under this Node, and temp files left by writers that died, are removed.
 */
function write(dir: string, command: string, name: string, bytes: () => Buffer): void {
  let temp: string | undefined
  try {
    if (ownDirectory(dir) === 'missing' && mayCreateIn(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 })
    if (ownDirectory(dir) !== 'ours') return
    const path = join(dir, `${name}.${randomBytes(6).toString('hex')}.tmp`)
    const fd = openSync(path, 'wx', 0o600)
    temp = path
    try {
      writeFileSync(fd, bytes())
    } finally {
      closeSync(fd)
    }
    renameSync(temp, join(dir, name))
    temp = undefined
    prune(dir, command, name)
  } catch {
    // Policy: a cache that cannot be written (read-only home, full disk) only means the next run
    // compiles again; the command's own result is what matters.
  } finally {
    try {
      if (temp !== undefined) rmSync(temp, { force: true })
    } catch {
      // Policy: as above; prune removes it later.
    }
  }
}

/** Removes `command`'s files of other builds under this Node and arch (only names this module
 *  writes), and temp files older than STALE_TEMP_MS; `name` is the one just written. */
function prune(dir: string, command: string, name: string): void {
  const sameCommand = (other: string): boolean =>
    other.startsWith(`${command}-`) && other.endsWith(NODE_SUFFIX) && /^[0-9a-f]{16}$/.test(other.slice(command.length + 1, -NODE_SUFFIX.length))
  for (const other of readdirSync(dir)) {
    try {
      const path = join(dir, other)
      if (other !== name && sameCommand(other)) rmSync(path, { force: true })
      else if (/\.v8\.[0-9a-f]{12}\.tmp$/.test(other) && Date.now() - lstatSync(path).mtimeMs > STALE_TEMP_MS) rmSync(path, { force: true })
    } catch {
      // Policy: an entry another dsync renamed or removed meanwhile; the next prune sees the rest.
    }
  }
}

/**
 * Whether this process may make `dir` (missing) and the folders above it that are missing: the
 * nearest folder that exists must be this user's, or root's with the sticky bit (/tmp). Not a
 * home of another user (a `sudo` that kept the user's HOME), where folders made as root would
 * shut the user out of their own cache, and ~/.cache out of other programs.
 */
function mayCreateIn(dir: string): boolean {
  if (process.geteuid === undefined) return true
  for (let at = dirname(dir); ; at = dirname(at)) {
    try {
      const st = lstatSync(at)
      return st.isDirectory() && (st.uid === process.geteuid() || (st.uid === 0 && (st.mode & 0o1000) !== 0))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) return false
    }
  }
}
