#!/usr/bin/env node
// Build step, not a command: bundles the compiled CLI (dist/src/cli/main.js and everything it
// imports, the lazily imported actions as their own chunks) into dist/bundle/, which
// bin/dsync.js runs when it is newer than the last compile. Run by `npm run build`, `npm test`
// and `npm install` (prepare), after tsc.
//
// Why (issue 8, bench/README.md "Startup"): loading ~150 modules of dist/ and ws, commander,
// cli-progress, ignore, @noble/hashes one by one (resolve, stat, read, compile each) was most of
// a small push: a no-op push of 10 files took 0.29–0.40 s, 0.18–0.22 s bundled (by hand, in
// turns). Left out, loaded from node_modules as before: lmdb, msgpackr and xxhash-addon (native
// addons found next to their package), @bokuweb/zstd-wasm (its .wasm file next to its module),
// and ws's optional native helpers. dist/bundle/meta.json maps each chunk to the modules in it
// (test/cli/startup.ts reads it to check what a command loads).
import { build } from 'esbuild'
import { rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

// Chunks are named by their content: those of earlier builds would pile up.
await rm(new URL('../dist/bundle', import.meta.url), { recursive: true, force: true })
const result = await build({
  absWorkingDir: root,
  entryPoints: ['dist/src/cli/main.js'],
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  metafile: true,
  sourcemap: 'linked',
  logLevel: 'warning',
  external: ['lmdb', 'msgpackr', '@bokuweb/zstd-wasm', 'xxhash-addon', 'bufferutil', 'utf-8-validate'],
  // Bundled CommonJS packages (ws, commander) call require() for Node's own modules.
  banner: { js: "import { createRequire as __dsyncRequire } from 'node:module'; const require = __dsyncRequire(import.meta.url);" },
})
await writeFile(new URL('../dist/bundle/meta.json', import.meta.url), JSON.stringify(result.metafile))
