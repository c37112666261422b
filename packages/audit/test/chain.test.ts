import { createHash } from 'node:crypto';
import { AuditChain, anchorHash, recordHash, unsealLine } from '../src/chain.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('AuditChain', () => {
  test('the first record is anchored to sha256 of the nonce text', () => {
    const chain = AuditChain.start('ab'.repeat(32));
    expect(chain.next()).toEqual({ seq: 1, prev_hash: sha256('ab'.repeat(32)), nonce: 'ab'.repeat(32) });
    expect(anchorHash('x')).toBe(sha256('x'));
  });

  test('hash = sha256(prev_hash + "\\n" + the line without its hash member)', () => {
    const chain = AuditChain.start('00'.repeat(32));
    const prev = chain.next().prev_hash;
    const body = `{"seq":1,"prev_hash":"${prev}","a":"é"}`;
    const { line, hash } = chain.seal(body);
    expect(hash).toBe(sha256(`${prev}\n${body}`));
    expect(hash).toBe(recordHash(prev, body));
    expect(line).toBe(`{"seq":1,"prev_hash":"${prev}","a":"é","hash":"${hash}"}`);
    expect(unsealLine(line)).toEqual({ body, hash });
  });

  test('commit advances seq and links to the committed hash; an uncommitted seal does not', () => {
    const chain = AuditChain.start();
    const first = chain.seal('{"x":1}');
    chain.seal('{"x":"discarded"}');
    chain.commit(first.hash);
    expect(chain.next()).toEqual({ seq: 2, prev_hash: first.hash });
    expect(AuditChain.resume({ seq: 41, hash: first.hash }).next()).toEqual({
      seq: 42,
      prev_hash: first.hash,
    });
  });

  test('only objects can be sealed, and only well-formed seals open', () => {
    expect(() => AuditChain.start().seal('[1]')).toThrow(TypeError);
    expect(unsealLine('{"hash":"abc"}')).toBeNull();
    expect(unsealLine(`{"a":1,"hash":"${'A'.repeat(64)}"}`)).toBeNull();
  });
});
