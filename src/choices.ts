/**
 * The named choices of the library and of `dsync`'s options: the similarity metrics and the
 * rule's defaults (similarity/), the chunkers (chunk/). A leaf that imports nothing, so that the
 * command line parses and shows them (`dsync push --help`) without loading those layers; they
 * export them as their own.
 */

/** The metrics `--metric` accepts. containment is "how much of the target the seed supplies". */
export type MetricName = 'jaccard' | 'dice' | 'lcs' | 'containment'
export const METRIC_NAMES: readonly MetricName[] = Object.freeze(['jaccard', 'dice', 'lcs', 'containment'])

/** Default metric: dice, formula 1 as the seed's code computes it (DESIGN.md "Decision"). */
export const DEFAULT_METRIC: MetricName = 'dice'
/** Default threshold: delta at or above 50% similarity (the seed's measurement). */
export const DEFAULT_THRESHOLD = 0.5

/** The chunkers that cut a file on its own (SBC is relative to known blocks: see chunk/sbc.ts). */
export type CutterKind = 'cdc' | 'fsp'
/** Every chunker `dsync similarity --chunker` accepts. */
export type ChunkerKind = CutterKind | 'sbc'
export const CHUNKER_KINDS: readonly ChunkerKind[] = Object.freeze(['cdc', 'fsp', 'sbc'])
