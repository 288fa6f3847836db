/**
 * A tiny WebAssembly assembler: just enough of the binary format (WebAssembly Core
 * Specification 2.0, §5) to emit a module of a few i32 functions over one memory. It lets
 * the kernels (the CDC cut search, chunk/cdc-wasm.ts; the delta's block hashes and search,
 * delta/hash-kernel.ts) be written as readable, reviewable TypeScript that mirrors their .wat
 * text, with no build step, no binary blob and no dependency (wabt) to keep in sync.
 */

/** Instruction opcodes used by the kernels (spec §5.4). Memory ops take `memarg` after. */
export const OP = Object.freeze({
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  return: 0x0f,
  select: 0x1b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  i32Load8U: 0x2d,
  i32Store: 0x36,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32Ne: 0x47,
  i32LtU: 0x49,
  i32GtU: 0x4b,
  i32LeU: 0x4d,
  i32GeS: 0x4e,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Or: 0x72,
  i32Xor: 0x73,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i32Rotl: 0x77,
})

/** Value and block types (spec §5.3). */
export const I32 = 0x7f
export const VOID_BLOCK = 0x40

/** Unsigned LEB128 (spec §5.2.2), for indices, sizes and counts. */
export function uleb(n: number): number[] {
  const out: number[] = []
  let v = n >>> 0
  do {
    let byte = v & 0x7f
    v >>>= 7
    if (v !== 0) byte |= 0x80
    out.push(byte)
  } while (v !== 0)
  return out
}

/** Signed LEB128 of a 32-bit integer, for `i32.const` operands. */
export function sleb(n: number): number[] {
  const out: number[] = []
  let v = n | 0
  for (;;) {
    const byte = v & 0x7f
    v >>= 7
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0)
    out.push(done ? byte : byte | 0x80)
    if (done) return out
  }
}

function name(s: string): number[] {
  const bytes = [...new TextEncoder().encode(s)]
  return [...uleb(bytes.length), ...bytes]
}

function vec(items: readonly number[][]): number[] {
  return [...uleb(items.length), ...items.flat()]
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content]
}

/** One exported function: i32 params and results, i32 locals, and its body (no final `end`). */
export interface WasmFunction {
  readonly name: string
  readonly params: number
  readonly results: number
  readonly locals: number
  readonly body: readonly number[]
}

/**
 * A module that defines one memory of `memoryPages` × 64 KiB (exported as "memory") and the
 * given functions, each exported under its name. Each function gets its own type entry.
 */
export function assembleModule(memoryPages: number, functions: readonly WasmFunction[]): Uint8Array {
  const types = functions.map((f) => [0x60, ...vec(Array(f.params).fill([I32])), ...vec(Array(f.results).fill([I32]))])
  const funcIndices = functions.map((_, i) => uleb(i))
  const memory = [[0x00, ...uleb(memoryPages)]]
  const exports = [
    [...name('memory'), 0x02, 0x00],
    ...functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]),
  ]
  const codes = functions.map((f) => {
    const locals = f.locals > 0 ? vec([[...uleb(f.locals), I32]]) : vec([])
    const body = [...locals, ...f.body, OP.end]
    return [...uleb(body.length), ...body]
  })
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    ...section(3, vec(funcIndices)),
    ...section(5, vec(memory)),
    ...section(7, vec(exports)),
    ...section(10, vec(codes)),
  ])
}

/** Instruction helpers shared by the kernels: a local's get / set / tee, an i32 constant. */
export const get = (l: number): number[] => [OP.localGet, ...uleb(l)]
export const set = (l: number): number[] => [OP.localSet, ...uleb(l)]
export const tee = (l: number): number[] => [OP.localTee, ...uleb(l)]
export const i32 = (c: number): number[] => [OP.i32Const, ...sleb(c)]

/**
 * A loop that leaves when `exit` (which pushes an i32) is true at the top of a turn:
 *   (block (loop (br_if 1 exit) body (br 0)))
 * Inside `body`, `br_if 1` also leaves it.
 */
export function loopUntil(exit: readonly number[], body: readonly number[]): number[] {
  return [OP.block, VOID_BLOCK, OP.loop, VOID_BLOCK, ...exit, OP.brIf, 1, ...body, OP.br, 0, OP.end, OP.end]
}

/**
 * The slice of the WebAssembly JS API the kernels use. Declared here because the project's
 * type libraries (ES2022, @types/node 20) do not declare WebAssembly; looked up on globalThis
 * so a runtime without it simply gets the JS loops.
 */
export interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object
  readonly Instance: new (module: object, imports: object) => { readonly exports: object }
  readonly CompileError: new () => Error
}

/** Bytes in a WebAssembly memory page. */
export const WASM_PAGE = 65536

/**
 * Compiles a module; undefined where WebAssembly is missing or refuses to compile (an embedder
 * that forbids code generation: the caller then uses its JS loop). A bug in the bytes would
 * also land here; each kernel's test asserts that Node has it, so it cannot go unnoticed.
 */
export function compileModule(bytes: Uint8Array): object | undefined {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly
  if (wasm === undefined) return undefined
  try {
    return new wasm.Module(bytes)
  } catch (err) {
    if (err instanceof wasm.CompileError) return undefined
    throw err
  }
}

/** A new instance of a compiled module (its own memory), with no imports. */
export function instantiate<T extends object>(module: object): T {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly!
  return new wasm.Instance(module, {}).exports as T
}
