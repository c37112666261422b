import { AllowAllGate, NoopTerminalObserver } from '../../../../test-support/terminal-doubles.js';
import { CrossSpawnProcessSpawner } from '../../src/adapters/cross-spawn-process-spawner.js';
import { ProcessTerminalHost, type ProcessTerminalHostOptions } from '../../src/process-terminal-host.js';
import type { CallerContext, TerminalId } from '../../src/terminal-spec.js';
import { until } from './processes.js';

const open: ProcessTerminalHost[] = [];

/**
 * A host with a short kill grace, closed after each test. Unless the test
 * passes its own, it allows everything, observes nothing and spawns plainly.
 */
export function newHost(options: Partial<ProcessTerminalHostOptions> = {}): ProcessTerminalHost {
  const host = new ProcessTerminalHost({
    killGraceMs: 300,
    gate: new AllowAllGate(),
    observer: new NoopTerminalObserver(),
    spawner: new CrossSpawnProcessSpawner(),
    ...options,
  });
  open.push(host);
  return host;
}

export async function closeHosts(): Promise<void> {
  await Promise.all(open.splice(0).map((host) => host.closeAll()));
}

/** Waits until the terminal printed `lines` newline-terminated lines and returns them. */
export async function linesPrinted(
  host: ProcessTerminalHost,
  id: TerminalId,
  lines: number,
  caller: CallerContext = {},
): Promise<string[]> {
  return until(async () => {
    const { output } = await host.output(id, caller);
    const printed = output.split('\n').slice(0, -1);
    return printed.length >= lines ? printed : undefined;
  });
}
