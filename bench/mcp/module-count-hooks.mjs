/**
 * Module-loader hooks for `run.mjs --profile`: appends the URL of every ES
 * module the server loads to the file named by TERMGATE_BENCH_MODULE_LOG.
 * (CommonJS `require`s are not seen; ESM graphs such as inversify 8 are.)
 */
import { appendFileSync } from 'node:fs';

const log = process.env.TERMGATE_BENCH_MODULE_LOG;

export async function load(url, context, nextLoad) {
  if (log !== undefined) appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}
