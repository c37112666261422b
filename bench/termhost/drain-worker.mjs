// One drain measurement in a fresh process, so peak RSS belongs to one variant only.
// Usage: node bench/termhost/drain-worker.mjs <raw|host|host-digest> <bytes>
// Prints one JSON line: { variant, bytes, seconds, rssGrowthBytes }.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { CrossSpawnProcessSpawner } from '../../packages/termhost/dist/adapters/index.js';
import { ProcessTerminalHost } from '../../packages/termhost/dist/index.js';
import { AllowAllGate, NoopTerminalObserver } from '../terminal-doubles.mjs';

const [variant = 'raw', sizeArg = String(1024 ** 3)] = process.argv.slice(2);
const bytes = Number(sizeArg);
const argv = ['head', '-c', String(bytes), '/dev/zero'];

async function rawDrain(size) {
  const child = spawn(argv[0], [argv[1], String(size), argv[3]], {
    env: { ...process.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let received = 0;
  child.stdout.on('data', (chunk) => {
    received += chunk.length;
  });
  child.stderr.resume();
  await once(child, 'close');
  return received;
}

function hostDrainer(digestOutput) {
  const host = new ProcessTerminalHost({
    gate: new AllowAllGate(),
    observer: new NoopTerminalObserver(),
    spawner: new CrossSpawnProcessSpawner(),
    digestOutput,
    maxOutputBytes: 1024 * 1024,
  });
  return async (size) => {
    const id = await host.create({ command: argv[0], args: [argv[1], String(size), argv[3]] });
    await host.waitForExit(id);
    const { totalBytes } = await host.output(id);
    await host.release(id);
    return totalBytes;
  };
}

const drain = variant === 'raw' ? rawDrain : hostDrainer(variant === 'host-digest');
// Warm up code paths (and the 1 MiB tail) before taking the baseline.
await drain(8 * 1024 * 1024);
const baseline = process.resourceUsage().maxRSS * 1024;
const started = performance.now();
const received = await drain(bytes);
const seconds = (performance.now() - started) / 1000;
const peak = process.resourceUsage().maxRSS * 1024;
if (received !== bytes) throw new Error(`${variant}: drained ${received} of ${bytes} bytes`);
process.stdout.write(`${JSON.stringify({ variant, bytes, seconds, rssGrowthBytes: peak - baseline })}\n`);
