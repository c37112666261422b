import { parsePolicyText } from '@termgate/policy';

/** `sandbox.tier` (docs/SANDBOX-TIERS.md): which confinement tier serve may take. */
const policy = (tier: string | null): string =>
  ['default: allow', 'sandbox:', '  mode: required', ...(tier === null ? [] : [`  tier: ${tier}`]), ''].join(
    '\n',
  );

describe('sandbox.tier', () => {
  test('defaults to auto', () => {
    expect(parsePolicyText(policy(null), '/p/policy.yaml').sandbox.tier).toBe('auto');
  });

  test.each(['auto', 'namespaces', 'landlock'])('%s is loaded as written', (tier) => {
    expect(parsePolicyText(policy(tier), '/p/policy.yaml').sandbox.tier).toBe(tier);
  });

  test('any other value is refused, naming the key', () => {
    expect(() => parsePolicyText(policy('seatbelt'), '/p/policy.yaml')).toThrow(/tier/);
  });

  test('without a sandbox section the tier is auto (and the sandbox off)', () => {
    const loaded = parsePolicyText('default: allow\n', '/p/policy.yaml');
    expect(loaded.sandbox.mode).toBe('off');
    expect(loaded.sandbox.tier).toBe('auto');
  });
});
