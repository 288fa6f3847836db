/**
 * The named choices of the library and of `dsync`'s options: the similarity metrics and the
 * rule's defaults (similarity/), the chunkers (chunk/), the server's caps (net/). A leaf that
 * imports nothing, so that the command line parses and shows them (`dsync push --help`, `dsync
 * serve --help`) without loading those layers; they export them as their own.
 */

/** The metrics `--metric` accepts. containment is "how much of the target the seed supplies". */
export type MetricName = 'jaccard' | 'dice' | 'lcs' | 'containment'
export const METRIC_NAMES: readonly MetricName[] = Object.freeze(['jaccard', 'dice', 'lcs', 'containment'])

/** Default metric: dice, formula 1 as the seed's code computes it (DESIGN.md "Decision"). */
export const DEFAULT_METRIC: MetricName = 'dice'
/** Default threshold: delta at or above 50% similarity (the seed's measurement). */
export const DEFAULT_THRESHOLD = 0.5

/** `dsync similar --top` at most: a query estimates at most this many candidates, most shared
 *  anchors first (store/similar-files.ts), and a served tree answers with at most this many
 *  (protocol LIMITS.maxQueryTop, the same number: test/net/codec.ts). */
export const MAX_QUERY_TOP = 256

/** The chunkers that cut a file on its own (SBC is relative to known blocks: see chunk/sbc.ts). */
export type CutterKind = 'cdc' | 'fsp'
/** Every chunker `dsync similarity --chunker` accepts. */
export type ChunkerKind = CutterKind | 'sbc'
export const CHUNKER_KINDS: readonly ChunkerKind[] = Object.freeze(['cdc', 'fsp', 'sbc'])

/** Caps on what a server holds for peers at once. */
export interface ServerLimits {
  /** Connections accepted and not yet authenticated (TCP accept to `welcome`), from anyone. */
  readonly maxPendingHandshakes: number
  /** The same, from one address. */
  readonly maxPendingPerAddress: number
  /** Authenticated sessions at once, running or waiting for their tree. */
  readonly maxSessions: number
}

/**
 * Defaults. A dsync client opens one connection per command and finishes its handshake in one
 * round trip, so a home and a work machine never come near these; they bound what a scanner or
 * a flood can hold (found on main: 2,000 idle connections accepted, each a socket and a timer).
 * - 64 pending: a burst of honest clients behind one server fits; a flood gets HTTP 503 at once.
 * - 8 pending per address: one host (a script in a loop, a scanner) cannot take all 64 slots
 *   and lock the owner's machines out. 8 still lets a NAT'ed office start several syncs at once.
 *   IPv6 addresses count one by one; a host holding a whole /64 can get around this cap, not
 *   around the total.
 * - 64 sessions: a running session holds up to ~12 MiB of channel buffers (8 in, 4 out), so
 *   64 is ~768 MiB at worst; sessions on one tree run one at a time, so most of them wait, small.
 */
export const DEFAULT_SERVER_LIMITS: ServerLimits = Object.freeze({
  maxPendingHandshakes: 64,
  maxPendingPerAddress: 8,
  maxSessions: 64,
})
