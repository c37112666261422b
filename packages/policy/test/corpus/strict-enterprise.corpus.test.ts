import { createPolicyEngine, loadPolicyFile, type PolicyEngine } from '@termgate/policy';
import { type CorpusEntry, readCorpus, STRICT_POLICY } from '../support/corpus.js';

const corpus = readCorpus();
let engine: PolicyEngine;

beforeAll(async () => {
  engine = await createPolicyEngine(await loadPolicyFile(STRICT_POLICY));
});

test('the corpus has at least 100 lines', () => {
  expect(corpus.length).toBeGreaterThanOrEqual(100);
});

test('every deny names where it comes from, and every deny rule of the policy is named', async () => {
  expect(corpus.filter((e) => e.expect === 'deny' && e.by === undefined)).toEqual([]);
  expect(corpus.filter((e) => e.by === 'refused' && !e.why)).toEqual([]);
  const named = new Set(corpus.flatMap((e) => (e.by === undefined ? [] : [e.by].flat())));
  const policy = await loadPolicyFile(STRICT_POLICY);
  const denyRules = policy.rules.filter((r) => r.decision === 'deny').map((r) => r.id);
  expect(denyRules.filter((id) => !named.has(id))).toEqual([]);
});

/** Where a deny came from, in the corpus's terms. */
function source(entry: CorpusEntry): { by: string | readonly string[]; why?: string } {
  const { decision, refusals } = engine.explain({
    command: entry.line,
    args: null,
    cwd: process.cwd(),
    env: {},
  });
  if (decision.ruleIds.length > 0) {
    return { by: decision.ruleIds.length === 1 ? decision.ruleIds[0]! : decision.ruleIds };
  }
  if (refusals.length > 0) {
    const why = entry.why !== undefined && refusals[0]!.startsWith(entry.why) ? entry.why : refusals[0]!;
    return { by: 'refused', why };
  }
  return { by: 'default' };
}

test.each(corpus.map((e) => [JSON.stringify(e.line), e] as const))('%s', (_name, entry) => {
  const decision = engine.judge({ command: entry.line, args: null, cwd: process.cwd(), env: {} });
  expect({ decision: decision.decision, reason: decision.reason }).toEqual({
    decision: entry.expect,
    reason: expect.any(String),
  });
  if (entry.expect === 'deny') {
    expect(source(entry)).toEqual({ by: entry.by, ...(entry.by === 'refused' ? { why: entry.why } : {}) });
  }
});
