import t from 'tap'
import { spawn } from 'node:child_process'
import { decode, encode, type Message } from '../../src/net/index.js'
import { DSYNC_BIN } from '../support/transports.js'
import { tempTree } from '../support/temp.js'

/** Runs the real `dsync serve --stdio`, feeds it `input`, and returns all it printed and its exit. */
async function serveStdio(root: string, input: (write: (b: Uint8Array) => void, end: () => void) => void) {
  const child = spawn(process.execPath, [DSYNC_BIN, 'serve', '--stdio', '--root', root], { stdio: ['pipe', 'pipe', 'pipe'] })
  const out: Buffer[] = []
  let err = ''
  child.stdout.on('data', (b: Buffer) => out.push(b))
  child.stderr.on('data', (b: Buffer) => (err += b))
  child.stdin.on('error', () => undefined) // it may stop reading first
  input((b) => child.stdin.write(b), () => child.stdin.end())
  const started = Date.now()
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)))
  return { stdout: Buffer.concat(out), stderr: err, code, ms: Date.now() - started }
}

/** Parses a whole stdout as frames: a message per length prefix, then a close record. */
function frames(bytes: Buffer): { messages: Message[]; close?: number; rest: number } {
  const messages: Message[] = []
  let at = 0
  while (at + 4 <= bytes.length) {
    const n = bytes.readUInt32BE(at)
    if (n === 0) return { messages, close: bytes.readUInt16BE(at + 4), rest: bytes.length - at - 7 - bytes.readUInt8(at + 6) }
    messages.push(decode(bytes.subarray(at + 4, at + 4 + n)))
    at += 4 + n
  }
  return { messages, rest: bytes.length - at }
}

function prefixed(payload: Uint8Array): Buffer {
  const head = Buffer.alloc(4)
  head.writeUInt32BE(payload.length)
  return Buffer.concat([head, payload])
}

t.test('serve --stdio fed garbage: hello, then error BAD_MESSAGE and a close on stdout (nothing else there), exit', async (t) => {
  const root = await tempTree(t)
  const r = await serveStdio(root, (write) => write(prefixed(Buffer.from('not msgpack, not dsync'))))
  const f = frames(r.stdout)
  t.match(f.messages, [{ t: 'hello' }, { t: 'error', code: 'BAD_MESSAGE' }])
  t.equal(f.close, 1008, 'close record: policy violation')
  t.equal(f.rest, 0, 'stdout holds frames only')
  t.equal(r.code, 0)
})

t.test('serve --stdio fed a 4 GiB length prefix before the handshake: refused on the prefix, promptly', async (t) => {
  const root = await tempTree(t)
  const r = await serveStdio(root, (write) => write(Buffer.from([0xff, 0xff, 0xff, 0xf0])))
  const f = frames(r.stdout)
  t.match(f.messages, [{ t: 'hello' }, { t: 'error', code: 'BAD_MESSAGE', message: /4294967280-byte frame before the handshake finished; the limit is 16384/ }])
  t.equal(f.close, 1009)
  t.ok(r.ms < 20_000, `exited after ${r.ms} ms`)
})

t.test('serve --stdio whose client leaves mid-frame, mid-handshake, exits on its own without waiting for a deadline', async (t) => {
  const root = await tempTree(t)
  const r = await serveStdio(root, (write, end) => {
    write(prefixed(encode({ t: 'filesEnd' })).subarray(0, 3))
    end()
  })
  t.equal(r.code, 0)
  t.match(frames(r.stdout).messages, [{ t: 'hello' }])
  t.ok(r.ms < 9_000, `exited after ${r.ms} ms, before the 10 s handshake deadline`)
})
