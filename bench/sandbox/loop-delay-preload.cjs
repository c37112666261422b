/**
 * Preloaded into the benchmarked server (`node --require …`): samples the
 * server's own event-loop delay (perf_hooks.monitorEventLoopDelay, 10 ms
 * resolution) and, on each SIGUSR2, writes what it saw since the previous
 * one to $TERMGATE_BENCH_LOOP_FILE as `<seq> <json>` and starts afresh.
 * Benchmark only: nothing in termgate loads it.
 */
const { writeFileSync } = require('node:fs');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const file = process.env.TERMGATE_BENCH_LOOP_FILE;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let seq = 0;
  process.on('SIGUSR2', () => {
    seq += 1;
    const ms = (ns) => ns / 1e6;
    const stats = {
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      samples: histogram.count,
    };
    writeFileSync(file, `${seq} ${JSON.stringify(stats)}\n`);
    histogram.reset();
  });
}
