// The security-critical file groups that `pnpm test:mutation [group…]` mutates
// (see docs/MUTATION.md, "StrykerJS"). Each group names the files StrykerJS
// mutates, the tests that may kill them (jest then narrows each run to the
// tests related to the mutated file, and per test coverage to the tests that
// reach the mutant), the tsconfig the TypeScript checker compiles mutants
// with, and the score below which the run fails (`break`).
//
// Only unit and in-process tests are listed: end-to-end tests start the built
// server (packages/cli/dist), which StrykerJS does not mutate, so they could
// kill nothing and would only cost time.

/** @type {Record<string, { description: string, mutate: string[], tests: string[], tsconfig: string, break: number }>} */
export const GROUPS = {
  transport: {
    description: 'the stdio transport: framing, line limits and exact JSON-RPC ids',
    mutate: ['packages/transport-stdio/src/**/*.ts', '!packages/transport-stdio/src/index.ts'],
    tests: ['packages/transport-stdio/test/**/*.test.ts'],
    tsconfig: 'packages/transport-stdio/tsconfig.json',
    break: 90,
  },
  audit: {
    description: "the audit chain, a record's bytes and fields, checkpoints and verification",
    mutate: [
      'packages/audit/src/chain.ts',
      'packages/audit/src/sealed-record.ts',
      'packages/audit/src/record-line.ts',
      'packages/audit/src/record-schema.ts',
      'packages/audit/src/checkpoint.ts',
      'packages/audit/src/signing-key.ts',
      'packages/audit/src/verify.ts',
      'packages/audit/src/verify-trail.ts',
    ],
    // file-audit-sink.test.ts also starts a child that imports the built
    // dist/, which a mutant run does not rebuild; its other tests are in-process.
    tests: ['packages/audit/test/**/*.test.ts', '!**/file-audit-sink.test.ts'],
    tsconfig: 'packages/audit/tsconfig.json',
    break: 95,
  },
  approvals: {
    description: 'approvals (ask, allow_always) and the sealed requestState of input_required',
    mutate: [
      'packages/policy/src/approvals.ts',
      'packages/core/src/mcp/approval/request-state.ts',
      // Not mcp-approvals.ts: only the end-to-end tests of packages/cli/test/approval
      // reach it (docs/MUTATION.md, "Not mutated yet").
    ],
    tests: [
      'packages/policy/test/policy-gate.ask.test.ts',
      'packages/policy/test/approval/**/*.test.ts',
      'packages/policy/test/engine/ask.test.ts',
      'packages/core/test/mcp/**/*.test.ts',
    ],
    tsconfig: 'stryker/tsconfig.json',
    break: 85,
  },
  gate: {
    description: "the policy gate and the engine's decision combining",
    mutate: ['packages/policy/src/policy-gate.ts', 'packages/policy/src/engine/policy-engine.ts'],
    tests: [
      'packages/policy/test/policy-gate*.test.ts',
      'packages/policy/test/engine/**/*.test.ts',
      'packages/policy/test/approval/**/*.test.ts',
    ],
    tsconfig: 'packages/policy/tsconfig.json',
    break: 92,
  },
  sandbox: {
    description: 'the sandbox: bubblewrap arguments, host allowlist, the policy sandbox view and profiler',
    mutate: [
      'packages/termhost/src/sandbox/bubblewrap-arguments.ts',
      'packages/termhost/src/sandbox/host-allowlist.ts',
      'packages/policy/src/sandbox/**/*.ts',
    ],
    tests: [
      'packages/termhost/test/sandbox/bubblewrap-arguments.test.ts',
      'packages/termhost/test/sandbox/host-allowlist.test.ts',
      'packages/policy/test/sandbox/**/*.test.ts',
      'packages/policy/test/policy-gate.test.ts',
    ],
    tsconfig: 'stryker/tsconfig.json',
    break: 60,
  },
  // Its own group: its tests start real sockets and count reports per time
  // window, which the sandbox files' mutants need not wait for.
  proxy: {
    description: 'the HTTP allowlist proxy of network: proxy',
    mutate: ['packages/termhost/src/sandbox/http-allowlist-proxy.ts'],
    tests: [
      'packages/termhost/test/sandbox/http-allowlist-proxy.test.ts',
      'packages/termhost/test/sandbox/proxy-fair-share.test.ts',
    ],
    tsconfig: 'stryker/tsconfig.json',
    break: 60,
  },
  requests: {
    description: "the JSON-RPC request engine's duplicate-id, cancellation and flow-control paths",
    // The engine under MCP and ACP (ids, flow control, cancellation, settle,
    // requests kept open) and the channel wiring; the MCP methods and the
    // era plumbing are covered by the tests but not mutated here.
    mutate: ['packages/core/src/jsonrpc/request-engine.ts', 'packages/core/src/jsonrpc/serve-channel.ts'],
    tests: ['packages/core/test/jsonrpc/**/*.test.ts', 'packages/core/test/mcp/**/*.test.ts'],
    tsconfig: 'packages/core/tsconfig.json',
    break: 88,
  },
};
