/** The wire: messages, codec, channels over WebSocket, a byte stream (ssh, stdio) or memory; auth,
 *  handshake, server and client, and the choice of transport by URL. */
export type { Message, MessageTag, MessageOf, FileEntry, SessionOptions, Role } from './messages.js'
export { encode, decode } from './codec.js'
export { type Channel, type ChannelLimits, DEFAULT_CHANNEL_LIMITS, CLOSE, memoryChannelPair } from './channel.js'
export { DEFAULT_IDLE_TIMEOUT_MS, withIdleTimeout } from './idle-timeout.js'
export { type ServerOptions, type Session, type RunningServer, startServer, isLoopbackHost } from './server.js'
export { type ConnectOptions, type DsyncUrl, DEFAULT_PORT, connect, parseDsyncUrl } from './client.js'
export { type Transport, type TransportOptions, connectTransport } from './transport.js'
export { StreamChannel } from './stream-channel.js'
export { serveChannel, type ChannelServerOptions } from './serve-channel.js'
export { type SshTarget, DEFAULT_REMOTE_DSYNC, DEFAULT_RSH, isSshTarget, parseSshTarget, splitCommand, sshCommand } from './ssh-target.js'
export { PROTOCOL_VERSION, SUPPORTED_VERSIONS, LIMITS } from '../../protocol/messages.js'
