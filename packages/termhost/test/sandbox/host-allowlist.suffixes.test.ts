import { HostAllowlist } from '../../src/sandbox/host-allowlist.js';

/** `*.` patterns: each one counts on its own, and only a well-formed name below it matches. */
describe('HostAllowlist suffixes', () => {
  const list = new HostAllowlist(['*.github.com', '*.npmjs.org']);

  it('a name below any one of several suffixes is allowed', () => {
    expect(list.allows('api.github.com')).toBe(true);
    expect(list.allows('registry.npmjs.org')).toBe(true);
  });

  it('the bare suffix, an empty label or a label with a leading hyphen is not a name below it', () => {
    for (const host of ['.github.com', 'a..github.com', '-x.github.com']) {
      expect({ host, allowed: list.allows(host) }).toEqual({ host, allowed: false });
    }
  });

  it('a pattern written with surrounding white space means the name', () => {
    expect(new HostAllowlist([' example.com ']).allows('example.com')).toBe(true);
  });
});
