import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly status: 413 | 400; readonly message: string };

/**
 * Reads a request body of at most `maxBytes`: a declared `Content-Length`
 * beyond it is refused before a byte is read, and a chunked body is
 * refused as soon as it passes the limit (the rest is not buffered).
 */
export function readBody(request: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(request.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.resolve(tooLarge(maxBytes));
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      bytes += chunk.length;
      if (bytes > maxBytes) {
        chunks.length = 0;
        settle(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => settle({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    request.on('error', () =>
      settle({ ok: false, status: 400, message: 'the request body could not be read' }),
    );
    request.on('close', () => settle({ ok: false, status: 400, message: 'the request body ended early' }));
  });
}

function tooLarge(maxBytes: number): BodyResult {
  return { ok: false, status: 413, message: `request body exceeds the ${maxBytes}-byte limit` };
}
