/**
 * Runs the bundled CLI (bin/bundle.js: dist/bundle/dsync.cjs, one CommonJS script) with the code
 * V8 compiled for it in earlier runs, kept in the user's cache directory. bin/dsync.js uses it
 * when the bundle is fresh; nothing else loads this module, and it loads nothing of dsync.
 *
 * Why (issue 8): most of a small push is starting. V8 parses ~1 MB of JavaScript and compiles
 * each function the first time it runs, in every process. Given the code of an earlier run, it
 * does neither. By hand, a no-op push of 10 files (8 runs each, in turns, one server):
 * 234–256 ms wall the bundle as ES modules, 245 ms as this script without a cache, 190–207 ms
 * with it. Node 20 can keep V8's code for a script (vm.Script's cachedData) but not for ES
 * modules (module.enableCompileCache came with Node 22), hence one script.
 *
 * One cache file per command (`push`, `serve`, … `cli` for --version and --help): each holds the
 * functions its command ran, and --version does not load push's. Written after a run that
 * ended well (exit 0) while the file is missing, damaged, refused by V8 (another Node, other V8
 * flags) or still young: rewritten after each of its first GENERATIONS runs, since a
 * first push of new files compiles other functions than the pushes of edits that follow. Files
 * of other builds of the same command are removed as a new one is written.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire, Module } from 'node:module'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { Script } from 'node:vm'

/** Runs after which a cache file is no longer rewritten (its last byte counts them). */
export const GENERATIONS = 3

/** What became of the cache for this run. */
export type CacheUse = 'none' | 'accepted' | 'rejected'

export interface CachedRun<T> {
  /** The script's `module.exports`. */
  readonly exports: T
  /** 'none': no cache file (or no cache directory); 'accepted': V8 used it; 'rejected': damaged
   *  (its check failed), or V8 refused it; the script was compiled from source. */
  readonly cache: CacheUse
  /** Writes this run's compiled code for the next runs when the file is missing, refused or
   *  young (see the module's comment); else nothing. Never throws: a cache is only a help. */
  save(): void
}

/**
 * Where dsync keeps its cache: DSYNC_CACHE_DIR when set (empty: no cache), else
 * $XDG_CACHE_HOME/dsync, else ~/.cache/dsync. Undefined when there is none to use.
 */
export function cacheDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.DSYNC_CACHE_DIR !== undefined) return env.DSYNC_CACHE_DIR === '' ? undefined : env.DSYNC_CACHE_DIR
  if (env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '') return join(env.XDG_CACHE_HOME, 'dsync')
  try {
    return join(homedir(), '.cache', 'dsync')
  } catch {
    // Policy: no home directory (a system user without one): run without a cache.
    return undefined
  }
}

/** The cache file of a command (argv[0] when it is a word, else `cli`) for build `buildId`. */
export function cacheFileFor(dir: string, buildId: string, argv: readonly string[]): string {
  const command = /^[a-z]{1,16}$/.test(argv[0] ?? '') ? argv[0]! : 'cli'
  return join(dir, `${command}-${buildId}-node${process.versions.node}-${process.arch}.v8`)
}

/**
 * Runs the CommonJS script `file` as Node would require it, with the compiled code in
 * `cacheFile` when V8 takes it. `cacheFile` must name this very script's build: V8 checks its
 * own version, its flags and the source's length, not the source's bytes (cacheFileFor puts the
 * build's id in the name).
 */
export function runCached<T>(file: string, cacheFile: string | undefined): CachedRun<T> {
  const source = readFileSync(file, 'utf8')
  const stored = cacheFile === undefined ? undefined : readOrUndefined(cacheFile)
  const { cachedData, generation, damaged } = unpack(stored)
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData !== undefined && { cachedData }) })
  const cache: CacheUse = damaged ? 'rejected' : cachedData === undefined ? 'none' : script.cachedDataRejected === true ? 'rejected' : 'accepted'
  const module = { exports: {} as T }
  const run = script.runInThisContext() as (exports: T, require: NodeJS.Require, module: { exports: T }, filename: string, dirname: string) => void
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file))
  return {
    exports: module.exports,
    cache,
    save() {
      if (cacheFile === undefined || (cache === 'accepted' && generation >= GENERATIONS)) return
      write(cacheFile, pack(script.createCachedData(), cache === 'accepted' ? generation + 1 : 1))
    },
  }
}

/** Bytes of the file's check: the SHA-1 of V8's data. */
const CHECK_BYTES = 20

/**
 * A cache file: V8's data, its SHA-1, and a byte counting the runs that wrote the file. The check
 * is ours because V8 (Node 20) does not check its data's checksum: by hand, a cache file with 40
 * bytes of its data overwritten crashed node (SIGSEGV) in `new Script`, and would have at every
 * run until deleted; a file left zero-filled by a crash would do the same. SHA-1 as a checksum
 * against damage, not against anyone (whoever can write this directory can write the user's
 * files): ~0.7 ms for the ~700 KB of a push's code here, faster than MD5 or, on CPUs without SHA
 * instructions, SHA-256.
 */
function pack(data: Buffer, generation: number): Buffer {
  return Buffer.concat([data, createHash('sha1').update(data).digest(), Buffer.of(generation)])
}

function unpack(stored: Buffer | undefined): { cachedData?: Buffer; generation: number; damaged: boolean } {
  if (stored === undefined || stored.length <= CHECK_BYTES + 1) return { generation: 0, damaged: stored !== undefined && stored.length > 0 }
  const data = stored.subarray(0, stored.length - CHECK_BYTES - 1)
  const check = stored.subarray(data.length, data.length + CHECK_BYTES)
  if (!createHash('sha1').update(data).digest().equals(check)) return { generation: 0, damaged: true }
  return { cachedData: data, generation: stored[stored.length - 1]!, damaged: false }
}

function readOrUndefined(path: string): Buffer | undefined {
  try {
    return readFileSync(path)
  } catch {
    // Policy: no cache file yet (or one that cannot be read): compile from source.
    return undefined
  }
}

/** Writes the cache file whole (temp file, rename: a reader sees the old file or the new one,
 *  never part of one), then removes the command's files of other builds. */
function write(cacheFile: string, bytes: Buffer): void {
  const dir = dirname(cacheFile)
  const temp = `${cacheFile}.${process.pid}.tmp`
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    writeFileSync(temp, bytes, { mode: 0o600 })
    renameSync(temp, cacheFile)
    const name = cacheFile.slice(dir.length + 1)
    const command = name.slice(0, name.indexOf('-') + 1)
    for (const other of readdirSync(dir)) {
      if (other !== name && other.startsWith(command) && other.endsWith('.v8')) rmSync(join(dir, other), { force: true })
    }
  } catch {
    // Policy: a cache directory that cannot be written (read-only home, full disk) only means
    // the next run compiles again; the command's own result is what matters.
    try {
      rmSync(temp, { force: true })
    } catch {
      // Policy: as above; a temp file left behind is named for this process and harmless.
    }
  }
}
