import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { isAlive } from '../../../../test-support/processes.js';
import { processGroupAlive, readStat, signalProcessGroup } from '../../src/adapters/posix-process-group.js';
import { until } from '../support/processes.js';

describe('posix process groups', () => {
  it('refuses to signal our own group or every process', () => {
    expect(signalProcessGroup(0, 0)).toBe('gone');
    expect(signalProcessGroup(1, 0)).toBe('gone');
    expect(signalProcessGroup(-5, 0)).toBe('gone');
    expect(processGroupAlive(0)).toBe(false);
  });

  it('sees a group that outlives its leader, and no longer once its last member died', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & echo $!'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = once(child, 'exit');
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    const orphan = Number(line.toString().trim());
    await exited;
    expect(readStat(orphan)?.pgrp).toBe(child.pid);
    expect(processGroupAlive(child.pid!)).toBe(true);

    expect(signalProcessGroup(child.pid!, 'SIGKILL')).toBe('alive');
    await until(() => !isAlive(orphan));
    // The orphan may linger as a zombie (an init that does not reap): still not alive.
    expect(processGroupAlive(child.pid!)).toBe(false);
  });
});
