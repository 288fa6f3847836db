/** Sync: the sender and receiver roles, and the push / pull / serve flows that place them. */
export { push, pull, type ClientOptions } from './client-session.js'
export { serve, type ServeOptions, type SyncServer } from './serve.js'
export { runSender, type SenderDeps } from './sender.js'
export { runReceiver, type ReceiverDeps } from './receiver.js'
export { SyncReport, type Action, type FileEvent, type SyncSummary } from './report.js'
export { sessionOptions, SYNC_CHUNK_PARAMS, type SyncResult } from './session.js'
export { checkOverwrite, conflictCopyPath, type OverwriteVerdict } from './conflict.js'
