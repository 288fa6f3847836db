#!/usr/bin/env node
// dsync's executable: hands the real process to the CLI and sets the exit code. A CommonJS
// script (bin/package.json), as is the launcher it requires: Node reaches an ES module's first
// line ~8 ms later than a script's, and importing code-cache.js as an ES module took ~9 ms more;
// --version's bundle ran at 98–102 ms after the process started, 84–86 ms so (by hand).
'use strict'
const { existsSync, statSync } = require('node:fs')
const { join } = require('node:path')

// libuv's thread pool runs every asynchronous file call; its default of 4 threads filled up with
// fsyncs of written files, and every open, write and rename of the others waited behind them.
// It must be set before the pool's first use, hence before the CLI is loaded.
process.env.UV_THREADPOOL_SIZE ??= '16'
const argv = process.argv.slice(2)
const BUNDLE = join(__dirname, '../dist/bundle/dsync.cjs')
const LAUNCHER = join(__dirname, '../dist/bundle/launch.cjs')

/**
 * Whether the CLI bundled (bin/bundle.js: one script, run with the code V8 compiled for it
 * before; ~0.14 s less to start than ~150 modules loaded one by one, and ~0.05 s less again
 * with that code) was built after the last compile: else the compiled modules run, and a
 * compile alone (`npx tsc`) never leaves an older bundle running.
 */
function freshBundle() {
  const mtime = (rel) => {
    try {
      return statSync(join(__dirname, rel)).mtimeMs
    } catch {
      return undefined
    }
  }
  // tsc rewrites its build info whenever it emits; an installed package has none (and all its
  // files one time). A tie (a coarse clock) goes to the modules: slower, never stale.
  const bundled = mtime('../dist/bundle/dsync.cjs')
  const built = [mtime('../dist/.tsbuildinfo'), mtime('../dist/.tsbuildinfo-build')].filter((t) => t !== undefined)
  return bundled !== undefined && built.every((t) => bundled > t) && existsSync(LAUNCHER)
}

/** The CLI's `main`, and the bundle's run (undefined when the compiled modules run). */
async function load() {
  // --debug prints stack traces: those of the compiled modules name the sources (src/cli/main.ts).
  if (argv.includes('--debug') || !freshBundle()) return { main: (await import('../dist/src/cli/main.js')).main, cached: undefined }
  // src/cli/code-cache.ts, bundled as CommonJS beside the CLI's bundle (bin/bundle.js).
  const { cacheDir, commandOf, runCached } = require(LAUNCHER)
  const cached = runCached(BUNDLE, cacheDir(process.env), commandOf(argv))
  return { main: cached.exports.main, cached }
}

const controller = new AbortController()
let interrupted = false
// First Ctrl+C (SIGINT), or SIGTERM (what `systemctl stop`, `docker stop` and `kill` send): cancel
// cleanly (temp files removed, old files intact, the tree's lock released; a server closes its
// sessions and says `stopped`). Second: exit now.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) process.exit(130)
    interrupted = true
    controller.abort(new Error('interrupted'))
  })
}

// A reader that went away (`dsync push --help | head`): stop writing and cancel cleanly, as
// other command-line tools stop, instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code !== 'EPIPE') throw err
    stream.write = () => true
    if (!controller.signal.aborted) controller.abort(new Error('output closed'))
  })
}

async function run() {
  const { main, cached } = await load()
  const code = await main(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  })
  process.exitCode = code
  // The code compiled in a run that went well, for the next ones (src/cli/code-cache.ts).
  if (code === 0) cached?.save()
  // Node ends by itself. process.exit() here ended a push 15 ms sooner (median of 10 pairs: the
  // heap not freed page by page), but one `dsync serve` of ~40 stopped by hand then never
  // exited (its main thread waiting on a futex after 'stopped'; a second Ctrl+C could not run).
  // Ending by itself, Node disposes of V8 before it stops its threads.
}

void run()
