import type { CallerContext, GateRequest, GateVerb, ResolvedTerminalSpec } from '@termgate/termhost';

export const MCP_CALLER: CallerContext = {
  clientName: 'claude-code',
  clientVersion: '2.1.0',
  protocol: 'mcp/2026-07-28',
};

/** A resolved spec as the host would pass it: a command line run by bash unless `args` is given. */
export function resolvedSpec(
  command: string,
  overrides: Partial<ResolvedTerminalSpec> = {},
): ResolvedTerminalSpec {
  const args = overrides.args ?? null;
  return {
    command,
    args,
    cwd: '/work/project',
    env: {},
    outputByteLimit: 1024,
    argv: args === null ? ['bash', '--noprofile', '--norc', '-c', command] : [command, ...args],
    ...overrides,
  };
}

export function gateRequest(
  verb: GateVerb,
  command: string,
  overrides: Partial<ResolvedTerminalSpec> = {},
  caller: CallerContext = MCP_CALLER,
): GateRequest {
  return { verb, terminalId: 'term-0123456789abcdef', spec: resolvedSpec(command, overrides), caller };
}
