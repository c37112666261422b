import { createPolicyEngine, loadPolicyFile, type PolicyEngine } from '@termgate/policy';
import { readCorpus, STRICT_POLICY } from '../support/corpus.js';

const corpus = readCorpus();
let engine: PolicyEngine;

beforeAll(async () => {
  engine = await createPolicyEngine(await loadPolicyFile(STRICT_POLICY));
});

test('the corpus has at least 100 lines', () => {
  expect(corpus.length).toBeGreaterThanOrEqual(100);
});

test.each(corpus.map((e) => [JSON.stringify(e.line), e] as const))('%s', (_name, entry) => {
  const decision = engine.judge({ command: entry.line, args: null, cwd: process.cwd(), env: {} });
  expect({ decision: decision.decision, reason: decision.reason }).toEqual({
    decision: entry.expect,
    reason: expect.any(String),
  });
});
