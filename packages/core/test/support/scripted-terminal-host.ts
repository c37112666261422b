import {
  type CallerContext,
  type ExitStatus,
  type OutputOptions,
  TermhostError,
  type TerminalHost,
  type TerminalOutput,
  type TerminalSpec,
  type WaitOptions,
} from '@termgate/termhost';

interface ScriptedTerminal {
  readonly spec: TerminalSpec;
  readonly caller: CallerContext | undefined;
  output: Buffer;
  exit: ExitStatus | null;
  readonly subscribers: Set<(chunk: Uint8Array, total: number) => void>;
  readonly exitWaiters: Set<(status: ExitStatus) => void>;
}

/**
 * An in-memory TerminalHost whose terminals the test drives by hand
 * (`write`, `exit`). It lets core tests pin ordering without processes.
 */
export class ScriptedTerminalHost implements TerminalHost {
  readonly terminals = new Map<string, ScriptedTerminal>();
  readonly calls: { verb: string; id?: string; caller?: CallerContext }[] = [];
  refuseWith: TermhostError | null = null;
  /** When set, `output` rejects with it (a gate refusing the verb). */
  refuseOutputWith: TermhostError | null = null;
  private next = 1;

  async create(spec: TerminalSpec, caller?: CallerContext): Promise<string> {
    this.calls.push({ verb: 'create', ...(caller && { caller }) });
    if (this.refuseWith) throw this.refuseWith;
    const id = `t${this.next++}`;
    this.terminals.set(id, {
      spec,
      caller,
      output: Buffer.alloc(0),
      exit: null,
      subscribers: new Set(),
      exitWaiters: new Set(),
    });
    return id;
  }

  write(id: string, text: string | Buffer): void {
    const t = this.get(id);
    const chunk = Buffer.isBuffer(text) ? text : Buffer.from(text);
    t.output = Buffer.concat([t.output, chunk]);
    for (const subscriber of t.subscribers) subscriber(chunk, t.output.length);
  }

  exit(id: string, status: ExitStatus): void {
    const t = this.get(id);
    t.exit = status;
    for (const waiter of t.exitWaiters) waiter(status);
    t.exitWaiters.clear();
  }

  async output(id: string, _caller?: CallerContext, options: OutputOptions = {}): Promise<TerminalOutput> {
    const t = this.get(id);
    if (this.refuseOutputWith) throw this.refuseOutputWith;
    const from = Math.min(options.fromByte ?? 0, t.output.length);
    return {
      output: t.output.subarray(from).toString('utf8'),
      offset: from,
      truncated: false,
      totalBytes: t.output.length,
      droppedBytes: 0,
      exitStatus: t.exit,
    };
  }

  waitForExit(id: string, options: WaitOptions = {}): Promise<ExitStatus> {
    let t: ScriptedTerminal;
    try {
      t = this.get(id);
    } catch (error) {
      return Promise.reject(error);
    }
    if (t.exit) return Promise.resolve(t.exit);
    return new Promise<ExitStatus>((resolve, reject) => {
      const onOutput = options.onOutput;
      if (onOutput) t.subscribers.add(onOutput);
      const done = (status: ExitStatus): void => {
        if (onOutput) t.subscribers.delete(onOutput);
        resolve(status);
      };
      t.exitWaiters.add(done);
      options.signal?.addEventListener(
        'abort',
        () => {
          t.exitWaiters.delete(done);
          if (onOutput) t.subscribers.delete(onOutput);
          reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
        },
        { once: true },
      );
    });
  }

  async kill(id: string): Promise<void> {
    this.calls.push({ verb: 'kill', id });
    const t = this.get(id);
    if (!t.exit) this.exit(id, { exitCode: null, signal: 'SIGTERM', timedOut: false });
  }

  async release(id: string): Promise<void> {
    this.calls.push({ verb: 'release', id });
    await this.kill(id);
    this.terminals.delete(id);
  }

  async closeAll(): Promise<void> {
    for (const id of [...this.terminals.keys()]) await this.release(id);
  }

  private get(id: string): ScriptedTerminal {
    const t = this.terminals.get(id);
    if (!t) throw new TermhostError('TERMINAL_NOT_FOUND', `no terminal ${id}`);
    return t;
  }
}
