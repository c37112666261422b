import {
  baseEnvironment,
  commandEnvironment,
  isShellStartupVariable,
  NON_INTERACTIVE_ENV,
} from '../src/environment.js';

describe('environment', () => {
  it('overlays the non-interactive defaults on the inherited environment and drops undefined values', () => {
    const base = baseEnvironment({ HOME: '/home/x', PAGER: 'less', GONE: undefined }, false);
    expect(base).toEqual({ HOME: '/home/x', ...NON_INTERACTIVE_ENV });
    expect('GONE' in base).toBe(false);
  });

  it('lets the request override the defaults', () => {
    const env = commandEnvironment(baseEnvironment({}, false), { PAGER: 'more', FOO: 'bar' }, false);
    expect(env.PAGER).toBe('more');
    expect(env.FOO).toBe('bar');
    expect(env.GIT_PAGER).toBe('cat');
  });

  it('removes shell startup variables from command lines, even when the request sets them', () => {
    const inherited = { BASH_ENV: '/x', ENV: '/y', 'BASH_FUNC_ls%%': '() { :; }' };
    const requested = {
      BASH_ENV: '/z',
      SHELLOPTS: 'xtrace',
      BASHOPTS: 'extglob',
      'BASH_FUNC_git%%': '() { :; }',
    };
    const line = commandEnvironment(baseEnvironment(inherited, true), requested, true);
    for (const name of ['BASH_ENV', 'ENV', 'SHELLOPTS', 'BASHOPTS', 'BASH_FUNC_ls%%', 'BASH_FUNC_git%%']) {
      expect(name in line).toBe(false);
    }
    const argv = commandEnvironment(baseEnvironment(inherited, false), requested, false);
    expect(argv.BASH_ENV).toBe('/z');
    expect(argv.ENV).toBe('/y');
    expect(argv['BASH_FUNC_git%%']).toBe('() { :; }');
  });

  it('names the shell startup variables', () => {
    expect(isShellStartupVariable('BASH_ENV')).toBe(true);
    expect(isShellStartupVariable('BASH_FUNC_x%%')).toBe(true);
    expect(isShellStartupVariable('BASH')).toBe(false);
    expect(isShellStartupVariable('PATH')).toBe(false);
  });
});
