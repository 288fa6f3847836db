import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'

// The architecture rules of STYLE.md, checked on every file so they hold without review.
// Compiled to dist/test/layering.js: two levels up is the repository, with the TypeScript sources.
const SRC = new URL('../../src/', import.meta.url).pathname
const CORE = ['chunk', 'hash', 'similarity', 'delta', 'compress']
const FOLDERS = ['cli', 'sync', 'net', 'store', 'fs', ...CORE]

async function sources(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const d of await readdir(dir, { withFileTypes: true })) {
    if (d.isDirectory()) out.push(...(await sources(join(dir, d.name))))
    else if (d.name.endsWith('.ts')) out.push(join(dir, d.name))
  }
  return out
}

/** Every module a file imports or re-exports from, statically or with `await import('…')`. */
function imports(text: string): string[] {
  return [
    ...text.matchAll(/^(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^import\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!)
}

/** zstd and the other compression libraries: src/compress/ alone picks and loads them. */
const COMPRESSION_BACKENDS = ['node:zlib', 'zlib', '@bokuweb/zstd-wasm', 'zstd-napi']

/** The src/ folder a relative import lands in, seen from `file`; undefined for a package. */
function targetFolder(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined
  const rel = relative(SRC, join(file, '..', spec))
  return rel.includes('/') ? rel.split('/')[0] : '' // '' = src/ itself (types.ts, errors.ts)
}

/** What runs the bundled CLI (bin/dsync.js → runCached), before it and outside it: it may take
 *  its SHA-1 from node:crypto, and imports nothing of src/, which the bundle holds its own copy
 *  of (a module loaded here would load twice). */
const LOADER = 'cli/code-cache.ts'

t.test('layers: each import is allowed by the architecture', async (t) => {
  const files = await sources(SRC)
  t.ok(files.length > 40, `read ${files.length} source files`)
  const problems: string[] = []
  for (const file of files) {
    const rel = relative(SRC, file)
    const folder = rel.includes('/') ? rel.split('/')[0]! : ''
    for (const spec of imports(await readFile(file, 'utf8'))) {
      const to = targetFolder(file, spec)
      const say = (why: string) => problems.push(`${rel} imports ${spec}: ${why}`)
      if (rel === LOADER) {
        if (!spec.startsWith('node:')) say('the bundle\'s loader imports only Node\'s modules: the bundle holds its own copy of every other')
        continue
      }
      if (to === undefined) {
        if (spec === 'msgpackr' && rel !== 'net/codec.ts') say('msgpackr belongs to src/net/codec.ts alone')
        if (spec === 'ws' && folder !== 'net') say('ws belongs to src/net/')
        if (COMPRESSION_BACKENDS.includes(spec) && folder !== 'compress') say('compression backends belong to src/compress/')
        if ((spec === 'node:crypto' || spec.startsWith('@noble/') || spec.startsWith('hash-wasm')) && folder !== 'hash') say('hashing backends belong to src/hash/')
        if (CORE.includes(folder) && /^node:(fs|net|http|https|child_process|os|path)/.test(spec)) say('the core does no I/O')
        continue
      }
      if (to === folder || to === '') continue
      if (to === '..') {
        // protocol/ (wire types and limits) is shared by both ends and read by the codec's layer.
        if (!(folder === 'net' && spec.includes('/protocol/'))) say('only src/net/ reads protocol/')
        continue
      }
      if (CORE.includes(folder) && !CORE.includes(to!)) say('the core imports only the core')
      const order = FOLDERS.indexOf(folder)
      if (FOLDERS.indexOf(to!) < order && !CORE.includes(to!)) say(`${folder} may not import ${to} (imports point down)`)
      if (!spec.endsWith(`/${to}/index.js`)) say(`import ${to}/ through its index.ts`)
    }
  }
  t.same(problems, [])
})
