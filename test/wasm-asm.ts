import t from 'tap'
import { assembleModule, OP, sleb, uleb } from '../src/wasm-asm.js'

t.test('LEB128 matches the spec examples and edge values', async (t) => {
  t.same(uleb(0), [0x00])
  t.same(uleb(127), [0x7f])
  t.same(uleb(128), [0x80, 0x01])
  t.same(uleb(624485), [0xe5, 0x8e, 0x26])
  t.same(sleb(0), [0x00])
  t.same(sleb(63), [0x3f])
  t.same(sleb(64), [0xc0, 0x00]) // bit 6 set: needs a second byte to stay positive
  t.same(sleb(-1), [0x7f])
  t.same(sleb(-64), [0x40])
  t.same(sleb(-65), [0xbf, 0x7f])
  t.same(sleb(-123456), [0xc0, 0xbb, 0x78])
  t.same(sleb(0x80000000 | 0), [0x80, 0x80, 0x80, 0x80, 0x78])
})

t.test('an assembled module compiles, exports its memory and runs its functions', async (t) => {
  // (func $mulAdd (param i32 i32) (result i32) local.get 0 i32.const 3 i32.shl local.get 1 i32.add)
  const bytes = assembleModule(1, [
    { name: 'mulAdd', params: 2, results: 1, locals: 0, body: [OP.localGet, 0, OP.i32Const, 3, OP.i32Shl, OP.localGet, 1, OP.i32Add] },
    // (func $peek (param i32) (result i32) (local i32) local.get 0 i32.load8_u local.tee 1 local.get 1 i32.add)
    { name: 'peek', params: 1, results: 1, locals: 1, body: [OP.localGet, 0, OP.i32Load8U, 0, 0, OP.localTee, 1, OP.localGet, 1, OP.i32Add] },
  ])
  const wasm = (globalThis as { WebAssembly?: { Module: new (b: Uint8Array) => object; Instance: new (m: object, i: object) => { exports: object } } }).WebAssembly
  t.ok(wasm, 'Node has WebAssembly')
  const exports = new wasm!.Instance(new wasm!.Module(bytes), {}).exports as {
    memory: { buffer: ArrayBuffer }
    mulAdd: (a: number, b: number) => number
    peek: (addr: number) => number
  }
  t.equal(exports.mulAdd(5, 2), 42)
  t.equal(exports.memory.buffer.byteLength, 65536)
  new Uint8Array(exports.memory.buffer)[100] = 21
  t.equal(exports.peek(100), 42)
})
