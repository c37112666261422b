import { type ApprovalFields, groupOf, readRecordGroups } from './record-schema.js';

/**
 * One asked command over MCP 2026-07-28 is written as two: the first call
 * asks (`terminal-create` with `termgate.decision: ask`, then a
 * `terminal-answer` with outcome `pending`, as the question travels in the
 * call's result), and the client's retry carries the person's answer (a
 * second `terminal-create`, then the answer whose `termgate.approval.answers`
 * names the first approval). The views (show `--decision ask`, `--summary`,
 * the report) count the command once, as the retry: the first call's
 * records are superseded once an answer names its approval. A question
 * nobody answered (no retry) stays, as it is the only record of the ask.
 *
 * Feed every record to `note` first (a first pass over the trail), then ask
 * `superseded`; memory is one id per answered round trip.
 */
export class AskRoundTrips {
  private readonly answered = new Set<string>();

  note(record: Readonly<Record<string, unknown>>): void {
    const { event, termgate } = readRecordGroups(record);
    if (event.action !== 'terminal-answer') return;
    const first = groupOf<ApprovalFields>(termgate.approval).answers;
    if (typeof first === 'string') this.answered.add(first);
  }

  /** True for the first call's create and pending answer of a round trip whose retry was answered. */
  superseded(record: Readonly<Record<string, unknown>>): boolean {
    const approval = groupOf<ApprovalFields>(readRecordGroups(record).termgate.approval);
    const id = approval.id;
    return typeof id === 'string' && this.answered.has(id) && !approval.answers;
  }
}
