import { assignedNames } from '../../src/shell/special-programs.js';

describe('assignedNames', () => {
  it.each([
    ['printf', ['-v', 'PATH', '%s', 'x'], ['PATH']],
    ['printf', ['-vPATH', '%s'], ['PATH']],
    ['printf', ['%s', 'x'], []],
    ['read', ['PATH'], ['PATH']],
    ['read', ['-r', 'a', 'b'], ['a', 'b']],
    ['read', ['-rp', 'prompt: ', 'x'], ['x']],
    ['read', ['-a', 'LD_PRELOAD'], ['LD_PRELOAD']],
    ['read', ['-t', '5', '-aarr', '--', 'y'], ['arr', 'y']],
    ['mapfile', ['-t', 'PATH'], ['PATH']],
    ['readarray', ['-d', '', '-t', 'lines'], ['lines']],
    ['mapfile', ['-t'], []],
    ['read', ['name[3]'], ['name']],
    ['echo', ['PATH'], []],
  ])('%s %j assigns %j', (name, args, expected) => {
    expect(assignedNames(name, args)).toEqual(expected);
  });
});
