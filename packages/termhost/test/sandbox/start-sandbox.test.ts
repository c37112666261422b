import { DEFAULT_SANDBOX_LIMITS } from '../../src/sandbox/sandbox-limits.js';
import { sandboxLimits, viewLayers } from '../../src/sandbox/start-sandbox.js';

const GiB = 1024 * 1024 * 1024;

describe('sandboxLimits', () => {
  it('takes the defaults for what the policy leaves out, the total at half the machine', () => {
    expect(sandboxLimits({}, 16 * GiB)).toEqual({ ...DEFAULT_SANDBOX_LIMITS, totalMemoryMiB: 8192 });
  });

  it("keeps the policy's own limits", () => {
    const policy = { processes: 10, memoryMiB: 100, tmpMiB: 20, totalMemoryMiB: 300 };
    expect(sandboxLimits(policy, 16 * GiB)).toEqual(policy);
  });

  it('never bounds the total below 64 MiB', () => {
    expect(sandboxLimits({}, 100 * 1024 * 1024).totalMemoryMiB).toBe(64);
  });
});

describe('viewLayers', () => {
  it('names the emptied trees, the writable directories and the allowed sockets', () => {
    const layers = viewLayers({
      mode: 'required',
      writable: ['/work', '/cache'],
      readOnly: [],
      hidden: [],
      network: 'none',
      allowlistedTrees: ['/home/me', '/run'],
      unixSockets: { allow: ['/run/docker.sock'] },
    });
    expect(layers.view).toBe(
      "the host's filesystem read-only; /home/me, /run emptied but for what is readable; writable: /work, /cache; the hidden paths covered; /tmp each terminal's own",
    );
    expect(layers.sockets).toBe('host Unix sockets covered unless allowed by path (/run/docker.sock)');
  });

  it('says so when there is nothing', () => {
    const layers = viewLayers({ mode: 'required', writable: [], readOnly: [], hidden: [], network: 'all' });
    expect(layers.view).toContain('(no tree) emptied');
    expect(layers.view).toContain('writable: (none)');
    expect(layers.sockets).toBe('host Unix sockets covered unless allowed by path (none)');
  });
});
