/**
 * The adapters of @termgate/termhost, reachable only as
 * `@termgate/termhost/adapters`: the technology behind the package's ports.
 * Only a composition root (the CLI), tests and benchmarks import them; the
 * package index exports the domain and the ports alone. What confines a
 * command (the sandbox, the cgroup and setpriv spawners) is
 * `@termgate/termhost/sandbox` (`src/sandbox/index.ts`). Named exports only.
 */

export { CrossSpawnProcessSpawner } from './cross-spawn-process-spawner.js';
export { DeferredTerminalHost } from './deferred-terminal-host.js';
