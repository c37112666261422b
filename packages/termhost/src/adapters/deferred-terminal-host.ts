import { TermhostError } from '../errors.js';
import type { OutputOptions, TerminalHost, WaitOptions } from '../ports/terminal-host.js';
import type {
  CallerContext,
  ExitStatus,
  TerminalId,
  TerminalOutput,
  TerminalSpec,
} from '../terminal-spec.js';

/**
 * A TerminalHost that becomes available later: the composition root can
 * start serving a protocol while the real host (and its gate) is still
 * being built.
 *
 * Contract:
 * - Every call waits until the real host is ready, then delegates; calls keep
 *   their order of arrival relative to readiness (nothing runs before it).
 * - If the real host fails to start, every call, pending or later, rejects
 *   with `HOST_CLOSED` naming the cause. Nothing is ever run without it.
 * - `closeAll` waits for readiness and closes the real host; if the start
 *   failed there is nothing to close and it resolves.
 */
export class DeferredTerminalHost implements TerminalHost {
  readonly #ready: Promise<TerminalHost>;

  constructor(ready: Promise<TerminalHost>) {
    this.#ready = ready.catch((error: unknown) => {
      throw new TermhostError(
        'HOST_CLOSED',
        `The terminal host could not start: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    // The rejection is observed by every call; this keeps an unused failure from being "unhandled".
    this.#ready.catch(() => undefined);
  }

  /** Resolves with the real host once it is ready; rejects with HOST_CLOSED if it failed to start. */
  ready(): Promise<TerminalHost> {
    return this.#ready;
  }

  async create(spec: TerminalSpec, caller?: CallerContext): Promise<TerminalId> {
    return (await this.#ready).create(spec, caller);
  }

  async output(id: TerminalId, caller?: CallerContext, options?: OutputOptions): Promise<TerminalOutput> {
    return (await this.#ready).output(id, caller, options);
  }

  async waitForExit(id: TerminalId, options?: WaitOptions, caller?: CallerContext): Promise<ExitStatus> {
    return (await this.#ready).waitForExit(id, options, caller);
  }

  async kill(id: TerminalId, caller?: CallerContext): Promise<void> {
    return (await this.#ready).kill(id, caller);
  }

  async release(id: TerminalId, caller?: CallerContext): Promise<void> {
    return (await this.#ready).release(id, caller);
  }

  async closeAll(scope?: string): Promise<void> {
    let host: TerminalHost;
    try {
      host = await this.#ready;
    } catch {
      return;
    }
    await host.closeAll(scope);
  }
}
