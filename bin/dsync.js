#!/usr/bin/env node
// dsync's executable: hands the real process to the CLI and sets the exit code.
import { statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// libuv's thread pool runs every asynchronous file call; its default of 4 threads filled up with
// fsyncs of written files, and every open, write and rename of the others waited behind them.
// It must be set before the pool's first use, hence before the CLI is imported.
process.env.UV_THREADPOOL_SIZE ??= '16'
const argv = process.argv.slice(2)
// --debug prints stack traces: those of the compiled modules name the sources (src/cli/main.ts).
const bundle = argv.includes('--debug') ? undefined : freshBundle()
const cached = bundle === undefined ? undefined : await runBundle(bundle)
const { main } = cached?.exports ?? (await import('../dist/src/cli/main.js'))

/**
 * The CLI bundled (bin/bundle.js: one script, run with the code V8 compiled for it before; ~0.14 s
 * less to start than ~150 modules loaded one by one, and ~0.05 s less again with that code) when
 * it was built after the last compile, else undefined: the compiled modules run, and a compile
 * alone (`npx tsc`) never leaves an older bundle running.
 */
function freshBundle() {
  const mtime = (rel) => {
    try {
      return statSync(new URL(rel, import.meta.url)).mtimeMs
    } catch {
      return undefined
    }
  }
  // tsc rewrites its build info whenever it emits; an installed package has none (and all its
  // files one time). A tie (a coarse clock) goes to the modules: slower, never stale.
  const bundled = mtime('../dist/bundle/dsync.cjs')
  const built = [mtime('../dist/.tsbuildinfo'), mtime('../dist/.tsbuildinfo-build')].filter((t) => t !== undefined)
  if (bundled === undefined || !built.every((t) => bundled > t)) return undefined
  return fileURLToPath(new URL('../dist/bundle/dsync.cjs', import.meta.url))
}

async function runBundle(file) {
  const { cacheDir, commandOf, runCached } = await import('../dist/src/cli/code-cache.js')
  return runCached(file, cacheDir(process.env), commandOf(argv))
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
// Everything the command started has ended (main awaits it all: sessions, stores, the remote
// shell). Left to end by itself, Node then frees its heap a page at a time and joins its
// threads: 20–30 ms after the last event, 4–11 ms with exit (strace, a push of 50 edited files);
// the push 628 → 613 ms, median of 10 pairs in turns. What is still queued for a pipe goes first.
await Promise.all([flushed(process.stdout), flushed(process.stderr)])
process.exit(code)

/** Resolves once `stream` has written what it holds (at once when it holds nothing, or when it
 *  is gone: a reader that went away, whose writes are dropped above). */
function flushed(stream) {
  if (stream.writableLength === 0 || stream.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    stream.once('drain', resolve)
    stream.once('close', resolve)
    stream.once('error', resolve)
  })
}
