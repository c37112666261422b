/**
 * Reading one sealed line back, and the chain's edges: each problem a
 * verifier reports for a line, where the seal must be (at the very end),
 * what counts as 64 hex characters, and a chain that never moves back.
 */
import { AuditChain, isHex64, unsealLine } from '../src/chain.js';
import { isSealedRecord, openSealedLine } from '../src/sealed-record.js';

const HEX = 'ab'.repeat(32);
const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');

/** A line sealed by a real chain, from the fields it hands out plus `extra` members. */
function sealedLine(fields: Record<string, unknown> = {}): string {
  const chain = AuditChain.start(HEX);
  const body = JSON.stringify({ ...chain.next(), ...fields });
  return chain.seal(body).line;
}

/** `text` with its seal recomputed over a body the caller chose (a well-sealed line with bad fields). */
function resealed(body: string): string {
  return AuditChain.resume({ seq: 1, hash: JSON.parse(body).prev_hash ?? HEX }).seal(body).line;
}

describe('openSealedLine', () => {
  it('opens a sealed line into its fields and record', () => {
    const opened = openSealedLine(bytes(sealedLine({ a: 'é' })));
    expect(isSealedRecord(opened)).toBe(true);
    expect(opened).toMatchObject({ seq: 1, nonce: HEX, record: { a: 'é', seq: 1 } });
  });

  it.each([
    ['', 'empty line where a record was expected'],
    ['{"seq":1', 'not valid JSON (edited or truncated record)'],
    ['[1]', 'not a JSON object'],
    ['null', 'not a JSON object'],
    ['"x"', 'not a JSON object'],
    ['7', 'not a JSON object'],
    ['{"seq":1}', 'no "hash" member at the end of the record'],
  ])('reports %j as: %s', (line, problem) => {
    expect(openSealedLine(bytes(line))).toEqual({ problem });
  });

  it.each([
    ['no seq', { seq: undefined }],
    ['seq 0', { seq: 0 }],
    ['a negative seq', { seq: -1 }],
    ['a fractional seq', { seq: 1.5 }],
    ['a seq past the safe integers', { seq: 2 ** 53 }],
    ['a seq that is text', { seq: '1' }],
  ])('refuses %s, even under a matching seal', (_label, fields) => {
    const body = JSON.stringify({ ...{ seq: 1, prev_hash: HEX }, ...fields });
    expect(openSealedLine(bytes(resealed(body)))).toEqual({
      problem: '"seq" is missing or not a positive integer',
    });
  });

  it('refuses a prev_hash that is not 64 hex characters, even under a matching seal', () => {
    const body = JSON.stringify({ seq: 1, prev_hash: HEX.toUpperCase() });
    expect(openSealedLine(bytes(resealed(body)))).toEqual({
      problem: '"prev_hash" is missing or not 64 hex characters',
    });
  });

  it('reports a changed byte as a hash mismatch', () => {
    const line = sealedLine({ a: 'x' }).replace('"a":"x"', '"a":"y"');
    expect(openSealedLine(bytes(line))).toEqual({
      problem: 'hash mismatch: the record was edited after it was written',
    });
  });
});

describe('the seal and hex checks', () => {
  it('finds the seal only at the very end of the line', () => {
    const inner = `{"a":{"x":1,"hash":"${HEX}"},"b":2}`;
    expect(unsealLine(inner)).toBeNull();
  });

  it('takes exactly 64 lowercase hex characters, as text', () => {
    expect(isHex64(HEX)).toBe(true);
    expect(isHex64(`x${HEX}`)).toBe(false);
    expect(isHex64(`${HEX}x`)).toBe(false);
    expect(isHex64(HEX.slice(1))).toBe(false);
    expect(isHex64([HEX])).toBe(false);
    expect(isHex64(undefined)).toBe(false);
  });

  it('refuses to seal what is not an object, and says so', () => {
    expect(() => AuditChain.start().seal('"x"')).toThrow('an audit record must be a JSON object');
  });
});

describe('AuditChain.adopt', () => {
  it('moves to a later record, and never to the same or an earlier seq', () => {
    const chain = AuditChain.resume({ seq: 5, hash: HEX });
    expect(() => chain.adopt({ seq: 5, hash: 'cd'.repeat(32) })).toThrow(
      new RangeError('cannot adopt seq 5: the chain is already at seq 5'),
    );
    expect(() => chain.adopt({ seq: 4, hash: 'cd'.repeat(32) })).toThrow(RangeError);
    expect(chain.last).toEqual({ seq: 5, hash: HEX });
    chain.adopt({ seq: 7, hash: 'cd'.repeat(32) });
    expect(chain.next()).toEqual({ seq: 8, prev_hash: 'cd'.repeat(32) });
  });

  it('adopts any head before the first record of its own', () => {
    const chain = AuditChain.start(HEX);
    chain.adopt({ seq: 1, hash: 'cd'.repeat(32) });
    expect(chain.next()).toEqual({ seq: 2, prev_hash: 'cd'.repeat(32) });
  });
});
