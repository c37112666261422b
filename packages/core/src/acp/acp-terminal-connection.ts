import { serveChannel } from '../jsonrpc/serve-channel.js';
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
  constructor(channel: MessageChannel, service: AcpTerminalService, logger: Logger = silentLogger) {
    const dispatcher = new AcpTerminalDispatcher(service, (m) => channel.send(m), logger, {
      backlogBytes: () => channel.backlogBytes?.() ?? 0,
      hold: (held) => (held ? channel.pause?.() : channel.resume?.()),
    });
    serveChannel(channel, dispatcher);
  }
}
