/** The wire: messages, codec, channels over WebSocket (or in memory), auth, server and client. */
export type { Message, MessageTag, MessageOf, FileEntry, SessionOptions, Role } from './messages.js'
export { encode, decode } from './codec.js'
export { type Channel, type ChannelLimits, DEFAULT_CHANNEL_LIMITS, CLOSE, memoryChannelPair } from './channel.js'
export { DEFAULT_IDLE_TIMEOUT_MS, withIdleTimeout } from './idle-timeout.js'
export { TokenBucket, withBandwidthLimit, type BucketClock } from './bandwidth-limit.js'
export { type ServerOptions, type Session, type RunningServer, startServer, isLoopbackHost } from './server.js'
export { type ConnectOptions, type DsyncUrl, DEFAULT_PORT, connect, parseDsyncUrl } from './client.js'
export { PROTOCOL_VERSION, SUPPORTED_VERSIONS, LIMITS } from '../../protocol/messages.js'
