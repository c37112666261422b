import { TermhostError } from '@termgate/termhost';
import { TerminalMirror } from '../../src/acp/terminal-mirror.js';
import { ScriptedTerminalHost } from '../support/scripted-terminal-host.js';

/** A host whose snapshots are refused (for example by the gate) while the wait still streams. */
class RefusingSnapshotsHost extends ScriptedTerminalHost {
  override async output(): Promise<never> {
    throw new TermhostError('GATE_DENIED', 'output denied: audit trail unavailable');
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TerminalMirror', () => {
  it('follows a terminal: snapshot, then every later byte, then the exit line', async () => {
    const host = new ScriptedTerminalHost();
    const id = await host.create({ command: 'x' });
    host.write(id, 'before\n');
    const mirror = new TerminalMirror(host, id, {}, 1024);
    mirror.start();
    await settle();
    host.write(id, 'after\n');
    host.exit(id, { exitCode: 0, signal: null, timedOut: false });
    await settle();
    expect(mirror.text()).toBe('before\nafter\n[exited with code 0]');
    expect(mirror.settled).toBe(true);
  });

  it('keeps the newest bytes when output exceeds the display size', async () => {
    const host = new ScriptedTerminalHost();
    const id = await host.create({ command: 'x' });
    const mirror = new TerminalMirror(host, id, {}, 8);
    mirror.start();
    await settle();
    host.write(id, 'abcdefghij');
    host.write(id, 'KLMN');
    await settle();
    expect(mirror.text()).toBe('[… earlier output omitted]\nghijKLMN');
  });

  it('stops following and holds nothing when the terminal cannot be read', async () => {
    const host = new RefusingSnapshotsHost();
    const id = await host.create({ command: 'x' });
    const mirror = new TerminalMirror(host, id, {}, 16);
    mirror.start();
    for (let i = 0; i < 100; i++) host.write(id, 'x'.repeat(100));
    await settle();
    expect(mirror.settled).toBe(true);
    expect(mirror.text()).toMatch(/^\[terminal output unavailable: output denied/);
    const held = mirror as unknown as { pending: unknown[]; pendingBytes: number };
    expect(held.pending).toEqual([]);
    // The wait was aborted: nothing more is held however much the command writes.
    for (let i = 0; i < 100; i++) host.write(id, 'y'.repeat(100));
    expect(held.pendingBytes).toBe(0);
  });
});
