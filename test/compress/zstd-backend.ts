import t from 'tap'
import { spawnSync } from 'node:child_process'
import { loadZstdBackends } from '../../src/compress/index.js'
import { randomBytes } from '../support/random.js'

// What protects the wire: every backend writes standard zstd frames that every other backend,
// the zstd tool and older dsync builds read, and none decodes past the size the caller declared.
const backends = await loadZstdBackends()
const text = new TextEncoder().encode('export function main(argv: string[]): number {\n  return 0\n}\n'.repeat(50))
// `zstd -3 -c` (zstd 1.5.4) of `text`: a frame with a checksum and a 2-byte content size, and the
// same bytes piped through stdin, where the tool cannot know the size and leaves it out.
const TOOL_FRAME = '28b52ffd64b80a2d0200c4036578706f72742066756e6374696f6e206d61696e28617267763a20737472696e675b5d293a206e756d626572207b0a202072657475726e20300a7d0a01009cb7ef2b2894846ed2'
const TOOL_FRAME_NO_SIZE = '28b52ffd04582d0200c4036578706f72742066756e6374696f6e206d61696e28617267763a20737472696e675b5d293a206e756d626572207b0a202072657475726e20300a7d0a01009cb7ef2b2894846ed2'

t.test('the WebAssembly zstd loads on any Node (it is a dependency); Node 22.15+ adds its own', async (t) => {
  const names = backends.map((b) => b.name)
  t.ok(names.includes('wasm'), names.join(', '))
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
  if (major > 23 || (major === 23 && minor >= 8) || (major === 22 && minor >= 15)) t.equal(names[0], 'node:zlib', 'Node’s own zstd is preferred')
})

t.test('frames from each backend decode with every backend', async (t) => {
  const inputs = { text, random: randomBytes(3, 300_000), empty: new Uint8Array(0) }
  for (const writer of backends) {
    for (const [what, raw] of Object.entries(inputs)) {
      const frame = writer.compress(raw, 3)
      for (const reader of backends) {
        t.ok(Buffer.from(reader.decompress(frame, raw.length)).equals(raw), `${what}: ${writer.name} → ${reader.name}`)
      }
    }
  }
})

t.test('frames written by the zstd tool decode with every backend', async (t) => {
  for (const b of backends) {
    for (const hex of [TOOL_FRAME, TOOL_FRAME_NO_SIZE]) {
      t.ok(Buffer.from(b.decompress(Buffer.from(hex, 'hex'), text.length)).equals(text), b.name)
    }
  }
})

const noTool = spawnSync('zstd', ['--version']).status !== 0 ? 'no zstd tool on PATH' : false
t.test('the zstd tool decodes our frames (standard frames on the wire)', { skip: noTool }, async (t) => {
  for (const b of backends) {
    const out = spawnSync('zstd', ['-d', '-c', '-q'], { input: b.compress(text, 3) })
    t.equal(out.status, 0, `${b.name}: ${String(out.stderr)}`)
    t.ok(out.stdout.equals(text), b.name)
  }
})

t.test('no backend decodes more bytes than the caller declared', async (t) => {
  for (const b of backends) {
    const noSize = Buffer.from(TOOL_FRAME_NO_SIZE, 'hex')
    t.throws(() => b.decompress(noSize, text.length - 1), `${b.name}: a frame without a size, declared one byte short`)
  }
})
