/**
 * Delta engine, pure: a seed's signature, the delta of a target against it, and applying a delta
 * to the seed. Byte formats: protocol/DELTA.md.
 */
export {
  type Signature,
  type SignatureOptions,
  EMPTY_SIGNATURE,
  MIN_BLOCK,
  MAX_BLOCK,
  DEFAULT_BLOCK,
  MATCH_MARGIN_BITS,
  blockSizeFor,
  blockSizeForChange,
  blockSizeForUnknownChange,
  blockSizeForRefinement,
  keyBits,
  computeSignature,
} from './signature.js'
export { SIGNATURE_VERSION, MAX_SIGNATURE_BYTES, encodeSignature, decodeSignature } from './signature-format.js'
export { DELTA_VERSION, MAX_FRAME_RAW } from './delta-format.js'
export { type DeltaStats, encodeDelta } from './encode-delta.js'
export { storedDelta } from './delta-writer.js'
export { type TargetCheck, isFastCheck, preferredHasher, sameCheck, targetHasher } from './target-check.js'
export { type SeedReader, type ByteSink, type ExpectedTarget, type AppliedDelta, applyDelta } from './apply-delta.js'
export {
  type Method, type SeedCandidate, type Decision, type SecondSeed, decide, passesThreshold, rankSeeds, changedRegions, secondSeed, smallestSeedBytes, EDITS_PER_UNSHARED_CHUNK, MIN_MEASURABLE_CHUNKS, MIN_SECOND_SEED_SHARE,
} from './decide.js'
export { type Match, type MatchList, type Hole, MAX_MATCHES, holesOf, encodeMatches, decodeMatches, isIdentity } from './match-list.js'
export { identityDigest, IDENTITY_DELTA_MAX_BYTES } from './identity.js'
export {
  type RefineSignature,
  type RefinePlan,
  MAX_REFINE_BLOCKS,
  DIRECT_REFINE_SPAN,
  MAX_REFINE_ROUNDS,
  planRefinement,
  nextRefinement,
  computeRefineSignature,
  encodeRefineSignature,
  decodeRefineSignature,
} from './refine-signature.js'
export { matchTarget, refineMatches, encodeMatchedDelta } from './refine.js'
export { type MatchedSimilarity, matchedSimilarity, matchesPass } from './match-similarity.js'
