/** Public API of @termgate/transport-stdio: newline-delimited JSON framing. Named exports only. */

export { stringifyMessage, topLevelMemberText, withExactId } from './exact-id.js';
export { type LineEvent, LineSplitter } from './line-splitter.js';
export {
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_STALL_TIMEOUT_MS,
  type FramingError,
  StdioTransport,
  type StdioTransportOptions,
} from './stdio-transport.js';
