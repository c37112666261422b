/**
 * The scan that finds the top-level `id` token in a line JSON.parse accepted:
 * each case is a shape of valid JSON where a scan that lost its place (an
 * escaped quote taken for the end of a string, a nested bracket not counted,
 * a separator inside a string) would hand back another member's text, or none.
 */
import { LosslessNumber } from 'lossless-json';
import { stringifyMessage, topLevelMemberText, withExactId } from '../src/exact-id.js';

/** What the scan finds must be what JSON.parse finds. */
function expectSameAsJsonParse(text: string, token: string): void {
  expect(topLevelMemberText(text, 'id')).toBe(token);
  expect(JSON.parse(text).id).toEqual(JSON.parse(token));
}

describe('topLevelMemberText: the top-level member as JSON.parse reads it', () => {
  it.each([
    ['a space', ' '],
    ['a tab', '\t'],
    ['a line feed', '\n'],
    ['a carriage return', '\r'],
  ])('skips %s around keys, colons and values', (_label, ws) => {
    const text = `${ws}{${ws}"a"${ws}:${ws}1${ws},${ws}"id"${ws}:${ws}7${ws}}${ws}`;
    expectSameAsJsonParse(text, '7');
  });

  it('is not fooled by an escaped quote in a top-level key or value', () => {
    expectSameAsJsonParse('{"a":"\\",\\"id\\":9,\\"b\\":\\"","id":1}', '1');
    expectSameAsJsonParse('{"\\",\\"id\\":9,\\"":2,"id":3}', '3');
    // An escaped backslash before a quote does end the string.
    expectSameAsJsonParse('{"a":"x\\\\","id":4}', '4');
    expectSameAsJsonParse('{"a":"x\\\\\\"\\\\","id":5}', '5');
  });

  it('skips a top-level string value holding separators and braces', () => {
    expectSameAsJsonParse('{"a":"x, \\"id\\": 9 }","id":1}', '1');
    expectSameAsJsonParse('{"a":"}","id":2}', '2');
  });

  it('skips nested objects and arrays to their own end, at any depth', () => {
    expectSameAsJsonParse('{"a":{"b":{}},"id":1}', '1');
    expectSameAsJsonParse('{"a":[[1],{"id":2}],"id":3}', '3');
    expectSameAsJsonParse('{"a":[{"b":[]},["]"]],"id":4}', '4');
    expectSameAsJsonParse('{"a":{"id":{"id":5}},"id":6,"b":{"c":[{}]}}', '6');
  });

  it('finds the id before, between or after other members', () => {
    expectSameAsJsonParse('{"id":1,"a":{"x":[2]}}', '1');
    expectSameAsJsonParse('{"a":true,"id":-2.5e+3,"b":null}', '-2.5e+3');
  });

  it('finds nothing in a line that is not an object', () => {
    expect(topLevelMemberText('[{"id":1}]', 'id')).toBeUndefined();
    expect(topLevelMemberText('"{\\"id\\":1}"', 'id')).toBeUndefined();
    expect(topLevelMemberText('  7', 'id')).toBeUndefined();
  });

  it('stops at the end of a cut-off object instead of reading past it', () => {
    expect(topLevelMemberText('{"id":7', 'id')).toBe('7');
    expect(topLevelMemberText('{"id":7,', 'id')).toBe('7');
  });
});

describe('withExactId and stringifyMessage: messages that are not objects', () => {
  it('hands back null, numbers, strings and arrays unchanged', () => {
    expect(withExactId('null', null)).toBeNull();
    expect(withExactId('7', 7)).toBe(7);
    expect(withExactId('"x"', 'x')).toBe('x');
    expect(withExactId('[{"id":1}]', [{ id: 1 }])).toEqual([{ id: 1 }]);
  });

  it('writes null and arrays as JSON.stringify does', () => {
    expect(stringifyMessage(null)).toBe('null');
    expect(stringifyMessage([1, { id: new LosslessNumber('2') }])).toBe('[1,{"id":2}]');
  });

  it('keeps the id exact when the message has no other member', () => {
    const message = withExactId('{"id":9007199254740993}', JSON.parse('{"id":9007199254740993}'));
    expect(stringifyMessage(message)).toBe('{"id":9007199254740993}');
  });
});
