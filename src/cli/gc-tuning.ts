import { setFlagsFromString } from 'node:v8'

/**
 * Has V8 sweep freed heap pages on the main thread instead of on its helper threads: for a
 * process about to receive file data (`dsync serve`, `pull`, two-way `sync`).
 *
 * Why: a receiver frees two buffers a message (Node's 64 KiB socket reads, and ws joining them
 * into each 1 MiB message: 2 GiB of ArrayBuffers for a 1 GiB file). With sweeping in the
 * background V8 started a full collection every ~50 ms: 65–76 of them for one new 1 GiB file
 * (`--trace-gc`), their concurrent marking and sweeping ~1.5 s of the receiver's ~5 CPU s on
 * its helper threads (`perf record -a`), on a machine of 2 vCPUs shared with the sender. Swept on
 * the main thread: 12–31 of them; by hand, a fresh `dsync serve` and one push, 3 runs each in
 * turns: the server's user CPU 3.1–3.3 → 1.6–2.1 s, the push 4.2–4.4 → 3.3–3.7 s, the server's
 * peak RSS 121–128 → 128–138 MiB. `--single-threaded-gc` did the same for CPU at 139–145 MiB.
 *
 * Not at start-up for every command: loading node:v8 costs ~3.6 ms, which a push (a sender)
 * would pay for nothing. V8 reads this flag each time it sweeps, so setting it once the process
 * runs takes effect (checked with `--trace-gc`).
 */
export function sweepOnMainThread(): void {
  setFlagsFromString('--no-concurrent-sweeping')
}
