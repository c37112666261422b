/**
 * One transport contract: transport-http (which imports nothing of ours)
 * hands the core an `HttpMessageChannel` that must be core's
 * `MessageChannel`, and the cli's `mcpEndpoint` adapts `McpServer` to the
 * transport's `McpEndpoint` port. The assignments are checked by `tsc -b`
 * (tsconfig.test.json): a member that drifts apart fails the build. The
 * real transport serving the real server is packages/cli/test/e2e/http-client.test.ts.
 */
import type { ConnectionContext as CoreConnectionContext, MessageChannel } from '@termgate/core';
import type { ConnectionContext, HttpMessageChannel } from '@termgate/transport-http';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe('the HTTP transport’s channel is a MessageChannel', () => {
  it('is assignable both ways, flow-control members included, and its scope is the core’s', () => {
    const toCore = (channel: HttpMessageChannel): MessageChannel => channel;
    const fromCore = (channel: Required<MessageChannel>): Omit<Required<HttpMessageChannel>, never> =>
      channel;
    const scopeAgrees: Same<ConnectionContext['scope'], CoreConnectionContext['scope']> = true;
    expect([typeof toCore, typeof fromCore, scopeAgrees]).toEqual(['function', 'function', true]);
  });
});
