import type { Logger } from '../ports/logger.js';
import type { MessageChannel } from '../ports/message-channel.js';

/** One side of a relayed conversation. */
export type RelaySide = 'editor' | 'agent';

export interface RelayFlowOptions {
  /** Unflushed writes to one side past which the other side is paused (it resumes at half). */
  readonly maxQueuedMessages: number;
  /** Unflushed bytes to one side past which the other side is paused (it resumes at half). */
  readonly maxQueuedBytes: number;
  /** How long a side may leave paused writes unread before it counts as gone. */
  readonly stallTimeoutMs: number;
  /** Called when a side stopped reading for `stallTimeoutMs`: the conversation ends. */
  readonly onStall: (side: RelaySide) => void;
  readonly logger: Logger;
}

/**
 * The flow control of a relay between two channels (the ACP proxy's editor
 * and agent).
 *
 * A relay is not a request engine (`jsonrpc/request-engine.ts`), and so it
 * does not reuse the engine's queue: it starts nothing and answers nothing,
 * it forwards messages it does not run, so there is no queue of its own to
 * hold back, no ids to track and no requests to cancel. The only queue is
 * the pipe of the side that does not read; what bounds memory is pausing
 * the *other* side's input while that pipe is backed up. The terminal
 * requests the proxy does run go through its engine (`AcpTerminalDispatcher`),
 * whose own hold comes in here as one more reason to pause the agent.
 *
 * Contract:
 * - `forward` sends in call order. While `maxQueuedMessages` writes or
 *   `maxQueuedBytes` to one side are not yet flushed, the other side is
 *   paused (reason `flow`); it resumes when both are back under half.
 * - A paused side cannot show its end of input, so a side that leaves the
 *   writes it was sent unread (none settles) for `stallTimeoutMs` counts as
 *   gone: `onStall` is called with it. Every settled write restarts the clock.
 * - `hold(side, reason, true)` pauses a side for a reason of the caller's;
 *   a side reads again once no reason holds.
 * - A failed write (the channel closed) is logged, never thrown.
 */
export class RelayFlow {
  /** Writes to each side not yet flushed. */
  private readonly queued: Record<RelaySide, number> = { editor: 0, agent: 0 };
  private readonly stallTimers: Record<RelaySide, NodeJS.Timeout | null> = { editor: null, agent: null };
  /** Why each side's input is paused: the other side's backlog (`flow`), or the caller's reasons. */
  private readonly pausedFor: Record<RelaySide, Set<string>> = { editor: new Set(), agent: new Set() };

  constructor(
    private readonly channels: Readonly<Record<RelaySide, MessageChannel>>,
    private readonly options: RelayFlowOptions,
  ) {}

  /** Sends `message` to side `to`, pausing the other side while `to`'s writes back up. */
  forward(to: RelaySide, message: unknown): void {
    const channel = this.channels[to];
    const from: RelaySide = to === 'editor' ? 'agent' : 'editor';
    this.queued[to]++;
    const sent = channel.send(message);
    if (!this.pausedFor[from].has('flow') && this.backedUp(to, 1)) {
      this.hold(from, 'flow', true);
      this.watchStall(to);
    }
    sent
      .catch((error: unknown) => {
        this.options.logger.debug({ err: error, to }, 'could not forward: the channel is closed');
      })
      .finally(() => {
        this.queued[to]--;
        if (this.stallTimers[to] !== null) this.watchStall(to); // progress: the peer reads again
        if (this.pausedFor[from].has('flow') && !this.backedUp(to, 2)) {
          this.clearStall(to);
          this.hold(from, 'flow', false);
        }
      });
  }

  /** Pauses a side's input while any reason holds. */
  hold(side: RelaySide, reason: string, held: boolean): void {
    const reasons = this.pausedFor[side];
    const before = reasons.size > 0;
    if (held) reasons.add(reason);
    else reasons.delete(reason);
    const after = reasons.size > 0;
    if (before === after) return;
    if (after) this.channels[side].pause?.();
    else this.channels[side].resume?.();
  }

  /** Stops watching for stalls (the conversation ends). */
  dispose(): void {
    this.clearStall('editor');
    this.clearStall('agent');
  }

  /** Whether writes to `to` are backed up past the limits divided by `divisor` (2: the resume threshold). */
  private backedUp(to: RelaySide, divisor: number): boolean {
    const bytes = this.channels[to].backlogBytes?.() ?? 0;
    return (
      this.queued[to] >= this.options.maxQueuedMessages / divisor ||
      bytes >= this.options.maxQueuedBytes / divisor
    );
  }

  private watchStall(side: RelaySide): void {
    this.clearStall(side);
    const timer = setTimeout(() => {
      this.options.logger.warn(
        { side, queued: this.queued[side] },
        'peer stopped reading; ending the conversation',
      );
      this.options.onStall(side);
    }, this.options.stallTimeoutMs);
    timer.unref();
    this.stallTimers[side] = timer;
  }

  private clearStall(side: RelaySide): void {
    const timer = this.stallTimers[side];
    if (timer !== null) clearTimeout(timer);
    this.stallTimers[side] = null;
  }
}
