/** JSON-RPC and MCP error codes this server sends. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP 2026-07-28: the `_meta` protocol version is not one this server serves. */
  UnsupportedProtocolVersion: -32022,
} as const;

/**
 * An error that crosses the wire: a JSON-RPC code, a one-sentence message and
 * optional data. Handlers throw it; the connection turns it into an error
 * response. Local (string-coded) errors never reach the wire as such.
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  static parseError(detail: string): ProtocolError {
    return new ProtocolError(ErrorCode.ParseError, `Parse error: ${detail}`);
  }
  static invalidRequest(detail: string): ProtocolError {
    return new ProtocolError(ErrorCode.InvalidRequest, `Invalid request: ${detail}`);
  }
  static methodNotFound(method: string): ProtocolError {
    return new ProtocolError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
  }
  static invalidParams(detail: string, data?: unknown): ProtocolError {
    return new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${detail}`, data);
  }
  static internal(detail: string): ProtocolError {
    return new ProtocolError(ErrorCode.InternalError, `Internal error: ${detail}`);
  }

  toWire(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
