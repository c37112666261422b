const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(?:\d+(?:ms|s|m|h|d))+$/;
const DURATION_PART = /(\d+)(ms|s|m|h|d)/g;

/**
 * The one duration syntax of the command line (`--audit-rotate-age`,
 * `--audit-checkpoint-interval`, `audit show --since`): whole numbers with a
 * unit, ms, s, m, h or d, one after another (`90s`, `15m`, `1h30m`). Returns
 * milliseconds, or null when `text` is not such a duration.
 */
export function durationMs(text: string): number | null {
  if (!DURATION.test(text)) return null;
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) ms += Number(amount) * UNIT_MS[unit!]!;
  return ms;
}
