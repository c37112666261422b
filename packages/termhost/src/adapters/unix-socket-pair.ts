import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A connected pair of Unix stream sockets: `child` to hand to a process as
 * its stdout *and* stderr, `parent` to read what it writes.
 *
 * Node gives a child one socketpair per `'pipe'` descriptor, so stdout and
 * stderr are two channels and their bytes can arrive out of order. Handing
 * the same socket to descriptors 1 and 2 makes them one channel, as a
 * terminal is. Node has no `socketpair()`, so the pair is made by
 * connecting to a listener: one abstract-namespace socket (Linux; no file,
 * nothing to clean up) per process, with a random name, and a random token
 * that each connection must send first, so a connection from anyone else is
 * never taken for ours.
 */
export interface UnixSocketPair {
  /** Give this to the child (for example `stdio: ['ignore', child, child]`), then destroy it. */
  readonly child: Socket;
  /** Not flowing until read; yields exactly what the child writes. */
  readonly parent: Socket;
}

const TOKEN_BYTES = 16;
/** How long a connection may take to present its token before it is dropped. */
const TOKEN_TIMEOUT_MS = 5_000;

let listener: Promise<{ server: Server; name: string }> | null = null;
const pending = new Map<string, (socket: Socket) => void>();

/** Resolves with a new connected pair; rejects (nothing left open) when it cannot be made. */
export async function unixSocketPair(): Promise<UnixSocketPair> {
  const { name } = await sharedListener();
  const token = randomBytes(TOKEN_BYTES);
  const key = token.toString('hex');
  const accepted = new Promise<Socket>((resolve) => pending.set(key, resolve));
  const child = connect(name);
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('connect', resolve);
      child.once('error', reject);
    });
    child.write(token);
    const parent = await withTimeout(accepted, TOKEN_TIMEOUT_MS);
    child.on('error', () => {});
    return { child, parent };
  } catch (error) {
    child.destroy();
    throw error;
  } finally {
    pending.delete(key);
  }
}

function sharedListener(): Promise<{ server: Server; name: string }> {
  listener ??= new Promise((resolve, reject) => {
    const name = `\0termgate-output-${process.pid}-${randomBytes(12).toString('hex')}`;
    const server = createServer({ pauseOnConnect: true }, claim);
    server.once('error', (error) => {
      listener = null;
      reject(error);
    });
    server.listen(name, () => {
      server.unref();
      resolve({ server, name });
    });
  });
  return listener;
}

/** Reads a connection's token; hands the socket, positioned after it, to whoever waits for that token. */
function claim(socket: Socket): void {
  // An error on a socket that carries a child's output only ends that output; 'close' follows.
  socket.on('error', () => {});
  const timer = setTimeout(() => socket.destroy(), TOKEN_TIMEOUT_MS);
  timer.unref();
  let head = Buffer.alloc(0);
  const onReadable = (): void => {
    for (;;) {
      const chunk: Buffer | null = socket.read(TOKEN_BYTES - head.length);
      if (chunk === null) return;
      head = Buffer.concat([head, chunk]);
      if (head.length < TOKEN_BYTES) continue;
      socket.off('readable', onReadable);
      clearTimeout(timer);
      const resolve = pending.get(head.toString('hex'));
      if (resolve === undefined) {
        socket.destroy();
        return;
      }
      resolve(socket);
      return;
    }
  };
  socket.on('readable', onReadable);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error('the output socket was not accepted'), { code: 'ETIMEDOUT' })),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
