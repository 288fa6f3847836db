#!/usr/bin/env node
// Build step, not a command: bundles the compiled CLI (dist/src/cli/main.js and everything it
// imports) into one CommonJS script, dist/bundle/dsync.cjs, which bin/dsync.js runs when it is
// newer than the last compile, with the code V8 compiled for it in earlier runs
// (src/cli/code-cache.ts). Run by `npm run build`, `npm test` and `npm install` (prepare), after
// tsc. The script's last line names its build (`//# dsync-build ID`: the start of the SHA-256 of
// the rest), which the cache files' names carry; it is written whole (temp file, rename).
//
// Why (issue 8, bench/README.md "Startup"): loading ~150 modules of dist/ and ws, commander,
// cli-progress, ignore, @noble/hashes one by one (resolve, stat, read, compile each) was most of
// a small push: a no-op push of 10 files took 0.29–0.40 s, 0.18–0.22 s bundled (by hand, in
// turns). One script rather than ES module chunks: Node 20 keeps V8's compiled code for a
// script, not for a module. The commands' actions stay lazy: esbuild turns their dynamic
// imports into functions that run their modules when first called. Left out, loaded from
// node_modules as before: lmdb, msgpackr and xxhash-addon (native addons found next to their
// package), @bokuweb/zstd-wasm (its .wasm file next to its module), and ws's optional native
// helpers.
'use strict'
const { build } = require('esbuild')
const { isAscii } = require('node:buffer')
const { createHash } = require('node:crypto')
const { mkdir, rename, rm, writeFile } = require('node:fs/promises')
const { join } = require('node:path')

const root = join(__dirname, '..')
const dir = join(root, 'dist/bundle')
const out = join(dir, 'dsync.cjs')

/** Both scripts: one CommonJS file each, for this Node. */
const COMMON = {
  absWorkingDir: root,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  // No comments and no indentation: the sources' comments made most of the CLI's script (1.0 MB,
  // with 66 characters outside ASCII in them, so V8 held it as 2 MB of two-byte string; now
  // 0.64 MB of ASCII). Reading and compiling it, with its kept code, took 11 ms less in a push
  // (by hand, tiny push, 4 runs each: the bundle ran 114 -> 103 ms after the process started;
  // ~860 fewer page faults). Names are kept; --debug runs the compiled modules instead
  // (bin/dsync.js), whose stacks name the TypeScript sources.
  minifyWhitespace: true,
  charset: 'ascii',
}

async function bundle() {
  // A bundle of an older build must not outlive it, nor its map.
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  // The launcher bin/dsync.js requires to run the bundle with its kept code: code-cache.ts, which
  // loads only Node's modules, as a CommonJS script (an ES module costs a CommonJS executable
  // ~9 ms more to load). Written first: bin/dsync.js runs the bundle only when both are there.
  await build({ ...COMMON, entryPoints: ['dist/src/cli/code-cache.js'], outfile: join(dir, 'launch.cjs') })
  const result = await build({
    ...COMMON,
    entryPoints: ['dist/src/cli/main.js'],
    outfile: out,
    sourcemap: 'linked',
    write: false,
    metafile: true,
    external: ['lmdb', 'msgpackr', '@bokuweb/zstd-wasm', 'xxhash-addon', 'bufferutil', 'utf-8-validate'],
    // The one `import.meta.url` (src/packages.ts: requirePackage) is the script's own URL. The
    // banner opens with "use strict": the sources are ES modules, strict, and a directive counts
    // only at the very start of the script (esbuild's own comes after the banner).
    define: { 'import.meta.url': '__dsyncScriptUrl' },
    banner: { js: "'use strict';\nvar __dsyncScriptUrl = require('node:url').pathToFileURL(__filename).href;" },
  })
  // runCached runs the script with no loader for import(): no dynamic import of a module left
  // outside the bundle may remain in it.
  const dynamic = Object.values(result.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.kind === 'dynamic-import' && i.external === true).map((i) => i.path))
  if (dynamic.length > 0) throw new Error(`bin/bundle.js: dynamic import() of ${dynamic.join(', ')} left in the bundle; bundle those modules, or load them with require`)
  for (const file of result.outputFiles) {
    if (file.path !== out) {
      await writeFile(file.path, file.contents)
      continue
    }
    // runCached reads an all-ASCII script as Latin-1, a plain copy (src/cli/code-cache.ts).
    if (!isAscii(file.contents)) throw new Error(`bin/bundle.js: ${out} holds characters outside ASCII; esbuild's charset: 'ascii' should have escaped them`)
    const id = createHash('sha256').update(file.contents).digest('hex').slice(0, 16)
    await writeFile(`${out}.tmp`, `${file.text}//# dsync-build ${id}\n`)
    await rename(`${out}.tmp`, out)
  }
}

bundle().catch((err) => {
  process.exitCode = 1
  console.error(err)
})
