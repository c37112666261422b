import { classify } from '../jsonrpc/messages.js';
import { ProtocolError } from '../jsonrpc/protocol-error.js';
import type { RequestId } from '../jsonrpc/request-id.js';
import { type Logger, silentLogger } from '../ports/logger.js';
import type { MessageChannel } from '../ports/message-channel.js';
import { AcpTerminalDispatcher } from './acp-terminal-dispatcher.js';
import type { AcpTerminalService } from './acp-terminal-service.js';

/**
 * The client side of an ACP connection that serves only the terminal
 * methods: a channel to an agent, whose `terminal/*` requests it answers and
 * whose `$/cancel_request`s it honours. Any other request is answered with
 * -32601; other notifications and responses are ignored.
 *
 * It does not own the terminals: `service.closeAll()` (or the host's
 * `closeAll(scope)`) releases them when the agent is gone.
 */
export class AcpTerminalConnection {
  private readonly dispatcher: AcpTerminalDispatcher;

  constructor(
    private readonly channel: MessageChannel,
    service: AcpTerminalService,
    private readonly logger: Logger = silentLogger,
  ) {
    this.dispatcher = new AcpTerminalDispatcher(service, (m) => this.channel.send(m), logger, {
      backlogBytes: () => channel.backlogBytes?.() ?? 0,
      hold: (held) => (held ? channel.pause?.() : channel.resume?.()),
    });
    channel.ondrain = () => this.dispatcher.pump();
    channel.onmessage = (message) => this.receive(message);
    channel.onframingerror = (error) => {
      const wire =
        error.kind === 'parse-error'
          ? ProtocolError.parseError(error.message)
          : ProtocolError.invalidRequest(`message of ${error.bytes} bytes exceeds the line limit`);
      void this.reply(null, wire);
    };
    channel.start();
  }

  private receive(raw: unknown): void {
    const message = classify(raw);
    switch (message.kind) {
      case 'invalid':
        void this.reply(message.id, message.error);
        return;
      case 'response':
        return;
      case 'notification':
        this.dispatcher.takeNotification(message);
        return;
      case 'request':
        if (!this.dispatcher.takeRequest(message)) {
          void this.reply(message.id, ProtocolError.methodNotFound(message.method));
        }
        return;
    }
  }

  private async reply(id: RequestId | null, error: ProtocolError): Promise<void> {
    try {
      await this.channel.send({ jsonrpc: '2.0', id, error: error.toWire() });
    } catch (sendError) {
      this.logger.debug({ err: sendError }, 'could not answer: the channel is closed');
    }
  }
}
