// The transcript fixture's dev server: prints its port, then one line per request.
import { createServer } from 'node:http';

const server = createServer((request, response) => {
  console.log(`${request.method} ${request.url} 200`);
  response.end('ok\n');
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
