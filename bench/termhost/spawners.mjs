#!/usr/bin/env node
/**
 * What the spawners `serve` composes cost: create + wait + release of `true`
 * (argv, no shell) through ProcessTerminalHost with the plain spawner (the
 * baseline), with a cgroup per terminal, through setpriv (as root), and with
 * both, interleaved round by round in one run. Needs root and a writable
 * cgroup v2 for the last three.
 *
 *   npx tsc -b packages/termhost && node bench/termhost/spawners.mjs [--cycles 150] [--rounds 5]
 */
import { parseArgs } from 'node:util';
import { CrossSpawnProcessSpawner } from '../../packages/termhost/dist/adapters/index.js';
import { ProcessTerminalHost } from '../../packages/termhost/dist/index.js';
import {
  CgroupProcessSpawner,
  createTerminalCgroupRoot,
  findOnPath,
  SetprivProcessSpawner,
} from '../../packages/termhost/dist/sandbox/index.js';
import { AllowAllGate, NoopTerminalObserver } from '../terminal-doubles.mjs';

const { values } = parseArgs({
  options: { cycles: { type: 'string', default: '150' }, rounds: { type: 'string', default: '5' } },
});
const CYCLES = Number(values.cycles);
const ROUNDS = Number(values.rounds);
const root = createTerminalCgroupRoot();
const setpriv = findOnPath('setpriv', '/usr/bin:/bin:/usr/sbin:/sbin');
if (root === null || setpriv === null || process.getuid?.() !== 0) {
  console.error('needs root, setpriv and a writable cgroup v2');
  process.exit(1);
}
const plain = new CrossSpawnProcessSpawner();
const variants = {
  'plain (baseline)': plain,
  'cgroup per terminal (the child joins it in the launcher)': new CgroupProcessSpawner(plain, root, {
    perl: '/usr/bin/perl',
    dropPtrace: false,
  }),
  'setpriv (no CAP_SYS_PTRACE)': new SetprivProcessSpawner(plain, setpriv),
  'both, one launcher (what serve uses as root)': new CgroupProcessSpawner(plain, root, {
    perl: '/usr/bin/perl',
    dropPtrace: true,
  }),
};
const results = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, spawner] of Object.entries(variants)) {
    const host = new ProcessTerminalHost({
      gate: new AllowAllGate(),
      observer: new NoopTerminalObserver(),
      spawner,
    });
    const start = performance.now();
    for (let i = 0; i < CYCLES; i++) {
      const id = await host.create({ command: 'true', args: [] });
      await host.waitForExit(id);
      await host.release(id);
    }
    results[name] ??= [];
    results[name].push((performance.now() - start) / CYCLES);
    await host.closeAll();
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const base = median(results['plain (baseline)']);
console.log(`| spawner | ms per create+wait+release (median of ${ROUNDS} rounds × ${CYCLES}) | vs plain |`);
console.log('|---|---|---|');
for (const [name, list] of Object.entries(results)) {
  console.log(`| ${name} | ${median(list).toFixed(2)} | ${(median(list) / base).toFixed(2)}× |`);
}
