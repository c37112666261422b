import { checkHostPattern } from '../../src/host-pattern.js';
import { HostAllowlist } from '../../src/sandbox/host-allowlist.js';

describe('HostAllowlist', () => {
  const list = new HostAllowlist(['registry.npmjs.org', '*.github.com', '127.0.0.2', '::1']);

  it.each([
    ['registry.npmjs.org', true],
    ['REGISTRY.npmjs.org.', true],
    ['api.github.com', true],
    ['a.b.github.com', true],
    ['github.com', false],
    ['evilgithub.com', false],
    ['registry.npmjs.org.evil.com', false],
    ['127.0.0.2', true],
    ['[::1]', true],
    ['127.0.0.1', false],
    ['', false],
    ['user@registry.npmjs.org', false],
    // An IPv6 literal with a zone id that ends like an allowed name: net.connect reads it as an address.
    ['::ffff:127.0.0.1%.github.com', false],
    ['[::ffff:127.0.0.1%.github.com]', false],
    ['127.0.0.2%.github.com', false],
    ['::1%lo', false],
    ['api.github.com%00', false],
    [' api.github.com', false],
    ['api.github.com\t', false],
    ['127.0.0.2.github.com', true],
    ['1.2.3.4.5', false],
  ])('%s → %s', (host, allowed) => {
    expect(list.allows(host)).toBe(allowed);
  });

  it.each([
    ['*', /bare "\*"/],
    ['*.com', /too broad/],
    ['a.*.com', /only as a leading/],
    ['*.127.0.0.1', /IP address takes no wildcard/],
    ['exa mple.com', /not a host name/],
  ])('rejects %s', (pattern, message) => {
    expect(checkHostPattern(pattern)).toMatch(message);
    expect(() => new HostAllowlist([pattern])).toThrow(message);
  });
});
