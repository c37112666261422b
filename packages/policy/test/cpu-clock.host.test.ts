import { Worker } from 'node:worker_threads';
import { CpuClock, ownThreadId } from '../src/cpu-clock.js';
import { parseBudget } from '../src/shell/bash-grammar.js';

/** Spins the calling thread for `ms` of wall-clock time. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('CpuClock: a thread’s CPU time from procfs', () => {
  test('the own thread’s clock advances while it computes and stands still while it sleeps', async () => {
    const clock = CpuClock.openOwnThread();
    expect(clock).not.toBeNull();
    const before = clock!.ms()!;
    spin(200);
    const afterSpin = clock!.ms()!;
    // A tick is 10 ms; a loaded machine may give the thread less than the wall time it spun.
    expect(afterSpin - before).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(clock!.ms()! - afterSpin).toBeLessThan(100);
    clock!.close();
    expect(clock!.ms()).toBeNull();
  });

  test('a worker thread reports its own id, this thread can read that thread’s clock, and it stops answering once the thread ended', async () => {
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const tid = Number(require('node:fs').readFileSync('/proc/thread-self/stat', 'latin1').split(' ', 1)[0]);
       parentPort.postMessage(tid);
       parentPort.on('message', () => { const until = Date.now() + 300; while (Date.now() < until); parentPort.postMessage('done'); });`,
      { eval: true },
    );
    try {
      const tid = await new Promise<number>((resolve) => worker.once('message', resolve));
      expect(tid).not.toBe(ownThreadId());
      const clock = CpuClock.openThread(process.pid, tid);
      expect(clock).not.toBeNull();
      const before = clock!.ms()!;
      worker.postMessage('spin');
      await new Promise((resolve) => worker.once('message', resolve));
      expect(clock!.ms()! - before).toBeGreaterThan(0);
      // A thread that ended reads as zero times: the clock answers null rather than run backwards.
      await worker.terminate();
      expect(clock!.ms()).toBeNull();
      clock!.close();
    } finally {
      await worker.terminate();
    }
  });

  test('a thread that does not exist, or ids that are not ids, give no clock', () => {
    expect(CpuClock.openThread(process.pid, 0x7ffffffe)).toBeNull();
    expect(CpuClock.openThread(-1, 1)).toBeNull();
    expect(CpuClock.openThread(process.pid, Number.NaN)).toBeNull();
  });
});

describe('parseBudget: the parser’s cancel callback counts CPU time, not the wall clock', () => {
  test('past the wall-clock budget, a thread that used no CPU goes on; once it has used the budget, the parse is cancelled', () => {
    let cpu = 1_000;
    const cancel = parseBudget(20, { ms: () => cpu });
    expect(cancel()).toBe(false);
    spin(30);
    expect(cancel()).toBe(false);
    cpu += 10;
    spin(15);
    expect(cancel()).toBe(false);
    cpu += 10;
    spin(15);
    expect(cancel()).toBe(true);
  });

  test('without a clock, or when the clock stops answering, the wall clock decides (fail closed)', () => {
    const wallOnly = parseBudget(20, null);
    expect(wallOnly()).toBe(false);
    spin(30);
    expect(wallOnly()).toBe(true);
    let answers = true;
    const broken = parseBudget(20, { ms: () => (answers ? 5 : null) });
    answers = false;
    spin(30);
    expect(broken()).toBe(true);
  });
});
