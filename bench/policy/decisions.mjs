// Policy-decision benchmark: judge() latency and throughput on typical
// 100–300 byte command lines, next to a trivial whitespace-split "judge"
// baseline run the same way, so the parser's cost shows as a ratio.
//
//   npx tsc -b packages/policy && node bench/policy/decisions.mjs
//   options: --iterations 20000 --rounds 3 --policy examples/strict-enterprise.yaml
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    policy: { type: 'string', default: 'policies/default.yaml' },
  },
});
const iterations = Number(values.iterations);
const rounds = Number(values.rounds);

// Init includes importing the package, loading the wasm runtime and the bash grammar, and loading the policy.
const t0 = performance.now();
const { createPolicyEngine, loadPolicyFile } = await import('../../packages/policy/dist/index.js');
const policy = await loadPolicyFile(values.policy);
const tLoaded = performance.now();
const engine = await createPolicyEngine(policy);
const tInit = performance.now();

const LINES = [
  'cd packages/web && npm run test -- --coverage --reporter=dot --testPathPattern="src/(components|hooks)/" 2>&1 | tee /tmp/test-output.log; echo "exit: $?"',
  'git log --oneline --decorate -20 -- src/components/Button.tsx src/components/Button.test.tsx | head -n 10 && git status --short --branch && git stash list',
  'rg -n --hidden --glob "!node_modules" --glob "!dist" "TODO|FIXME|XXX" src tests scripts | sort | uniq -c | sort -rn | head -50',
  'find . -name "*.test.ts" -not -path "./node_modules/*" -not -path "./dist/*" -exec grep -l "describe.skip" {} + | xargs wc -l | sort -n',
  'timeout 120 npx tsc -b packages/core packages/cli packages/policy --pretty false 2>&1 | grep -E "error TS[0-9]+" | sed -e "s/^/  /" | head -40',
  'python3 -m pytest tests/unit tests/integration -q -x --maxfail=3 -k "not slow and not network" --durations=10 2>&1 | tail -n 30',
  'docker compose -f docker/dev.yml logs --since 10m --no-color api worker scheduler 2>&1 | grep -i -E "error|panic|fatal" | tail -100',
  'for f in src/*.ts src/lib/*.ts; do echo "== $f"; grep -c "export " "$f"; done > /tmp/exports.txt && sort -k2 /tmp/exports.txt | cat',
  'curl -fsS -H "Accept: application/json" -H "X-Request-Id: bench-1" "http://localhost:8080/api/v1/health?verbose=1" | jq ".checks[] | select(.ok == false) | .name"',
  "cat <<'EOF' > .env.test\nDATABASE_URL=postgres://localhost:5432/test\nLOG_LEVEL=debug\nFEATURE_FLAGS=a,b,c\nEOF\nnpm run migrate -- --env test && npm run seed -- --env test",
  'bash -c "cd services/auth && go test ./... -run TestToken -count=1 -v 2>&1 | grep -E \'^(---|ok|FAIL)\'" && echo done',
  'git diff --stat origin/main...HEAD && git diff origin/main...HEAD -- package.json pnpm-lock.yaml tsconfig.base.json | head -200 | cat -A | head -5',
];
const lengths = LINES.map((l) => Buffer.byteLength(l));
const requests = LINES.map((command) => ({ command, args: null, cwd: process.cwd(), env: {} }));

const SAFE = new Set(['git', 'ls', 'cat', 'grep', 'rg', 'npm', 'node', 'echo', 'cd', 'head', 'tail']);
/** The baseline: what a naive gate does — split on whitespace, look at the first word. */
function naiveJudge(request) {
  const words = request.command.split(/\s+/);
  return SAFE.has(words[0]) ? 'allow' : 'deny';
}

function measure(fn) {
  for (let i = 0; i < 2000; i++) fn(requests[i % requests.length]);
  const samples = new Float64Array(iterations);
  let sink = 0;
  const start = performance.now();
  for (let i = 0; i < iterations; i++) {
    const a = performance.now();
    const out = fn(requests[i % requests.length]);
    samples[i] = performance.now() - a;
    sink += typeof out === 'string' ? out.length : out.ruleIds.length;
  }
  const elapsed = performance.now() - start;
  samples.sort();
  const q = (p) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] * 1000;
  return { perSecond: iterations / (elapsed / 1000), p50: q(0.5), p99: q(0.99), max: q(1), sink };
}

const results = { judge: [], naive: [] };
for (let r = 0; r < rounds; r++) {
  results.judge.push(measure((req) => engine.judge(req)));
  results.naive.push(measure(naiveJudge));
}
const median = (xs, k) => xs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const row = (name, xs) => ({
  name,
  perSecond: median(xs, 'perSecond'),
  p50: median(xs, 'p50'),
  p99: median(xs, 'p99'),
  max: median(xs, 'max'),
});
const judge = row('PolicyEngine.judge', results.judge);
const naive = row('line.split(/\\s+/) baseline', results.naive);
const fmt = (n, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

console.log(
  `policy: ${values.policy} (${policy.rules.length} rules); lines: ${LINES.length}, ${Math.min(...lengths)}–${Math.max(...lengths)} bytes`,
);
console.log(
  `init: import+policy load ${fmt(tLoaded - t0)} ms, parser init ${fmt(tInit - tLoaded)} ms, total ${fmt(tInit - t0)} ms`,
);
console.log(`iterations: ${iterations} × ${rounds} rounds (median round shown)`);
console.log('| judge | decisions/s | p50 µs | p99 µs | max µs | vs baseline (decisions/s) |');
console.log('|---|---|---|---|---|---|');
for (const r of [judge, naive]) {
  console.log(
    `| ${r.name} | ${fmt(r.perSecond, 0)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${fmt(r.perSecond / naive.perSecond, 4)}× |`,
  );
}
console.log(`p99 target < 1000 µs: ${judge.p99 < 1000 ? 'met' : 'MISSED'}`);
