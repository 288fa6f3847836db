// decode speed of a 'files' message of 1000 entries, msgpackr with or without its native extractor
const { encode, decode } = await import('./dist/src/net/codec.js')
const entries = Array.from({ length: 1000 }, (_, i) => ({ path: `src/some/dir${i % 37}/file-number-${i}.txt`, kind: 'file', size: 20000 + i, mtimeMs: 1795700000000 + i, mode: 0o644, status: 'changed' }))
const frame = encode({ t: 'files', entries })
let best = Infinity
for (let r = 0; r < 5; r++) { const t = performance.now(); for (let k = 0; k < 200; k++) decode(frame); best = Math.min(best, (performance.now() - t) / 200) }
console.log(process.env.MSGPACKR_NATIVE_ACCELERATION_DISABLED ? 'js    ' : 'native', 'frame', frame.length, 'B, decode', best.toFixed(3), 'ms per 1000-entry files message')
