import type { ChannelFramingError, MessageChannel } from '../ports/message-channel.js';
import { classify, type InboundResponse } from './messages.js';
import { ProtocolError } from './protocol-error.js';
import type { RequestEngine } from './request-engine.js';

/** The wire error for a line the channel could not frame: -32700, or -32600 naming the sizes. */
export function framingErrorAnswer(error: ChannelFramingError): ProtocolError {
  return error.kind === 'parse-error'
    ? ProtocolError.parseError(error.message)
    : ProtocolError.invalidRequest(
        `message of ${error.bytes} bytes exceeds the ${error.maxLineBytes}-byte line limit and was discarded`,
      );
}

/**
 * Serves one channel with an engine: every message is classified; an
 * invalid one and a framing error are answered with their error (id `null`
 * when none could be read), a request the engine does not take with -32601,
 * notifications go to the engine (those it does not take are ignored), and
 * responses to `onResponse`. The channel's `ondrain` pumps the engine; the
 * channel is started.
 */
export function serveChannel(
  channel: MessageChannel,
  engine: RequestEngine,
  onResponse: (response: InboundResponse) => void = () => undefined,
): void {
  channel.ondrain = () => engine.pump();
  channel.onmessage = (raw) => {
    const message = classify(raw);
    switch (message.kind) {
      case 'invalid':
        void engine.answerError(message.id, message.error);
        return;
      case 'response':
        onResponse(message);
        return;
      case 'notification':
        engine.takeNotification(message);
        return;
      case 'request':
        if (!engine.takeRequest(message)) {
          void engine.answerError(message.id, ProtocolError.methodNotFound(message.method));
        }
        return;
    }
  };
  channel.onframingerror = (error) => void engine.answerError(null, framingErrorAnswer(error));
  channel.start();
}
