/**
 * What a sandboxed command may see and touch, fully resolved: absolute
 * paths that exist (or are skipped), nothing left to expand. The gate's
 * allow decision carries it and the spawner enforces it, so what was judged
 * is what is enforced.
 *
 * The model is bubblewrap's: the whole filesystem read-only, then, in this
 * order, `emptied` trees replaced by an empty directory, `readable` paths
 * shown through them read-only, `sockets` bound in, `writable` bound
 * read-write, `readOnly` re-bound read-only inside them, the placeholders
 * mounted where a protected path does not exist yet, `hidden` covered (an
 * empty directory or an empty file), and last the emptied trees made
 * read-only. A later entry wins over an earlier one for the paths it covers.
 */
export interface SandboxProfile {
  readonly filesystem: {
    /**
     * Directories that appear with nothing in them but what `readable`,
     * `sockets` and `writable` name inside them (HOME, `/root`, `/run`):
     * an allowlisted view. Read-only once those are mounted. Absent: none.
     */
    readonly emptied?: readonly string[];
    /** Paths inside `emptied` trees shown read-only (existing files or directories). Absent: none. */
    readonly readable?: readonly string[];
    /** Host Unix sockets the policy allows by path, bound in (existing sockets). Absent: none. */
    readonly sockets?: readonly string[];
    /** Directories (or files) bound read-write, in the order given. */
    readonly writable: readonly string[];
    /** Paths re-bound read-only after the writable ones (carve-outs inside them). */
    readonly readOnly: readonly string[];
    /**
     * Protected paths inside writable directories that do not exist yet: an
     * empty read-only directory, or an empty read-only file, is mounted
     * there, so a command cannot create them. The mount point stays on the
     * host as an empty directory or file. Absent: none.
     */
    readonly placeholderDirectories?: readonly string[];
    readonly placeholderFiles?: readonly string[];
    /** Directories covered by an empty tmpfs, files by an empty read-only file. */
    readonly hiddenDirectories: readonly string[];
    readonly hiddenFiles: readonly string[];
    /**
     * Non-null: `/tmp` is a private tmpfs of the command's own (one per
     * terminal, sized by the sandbox's limits; the string names the server's
     * private directory it replaced and is not mounted). `null`: `/tmp` is
     * left as the rest of the filesystem is (read-only unless listed in `writable`).
     */
    readonly tmp: string | null;
  };
  /**
   * `all`: the host's network. `none`: loopback only, shared by the
   * terminals of one server. `proxy`: like `none`, plus a filtering HTTP
   * proxy reachable on that loopback (the spawner sets the proxy variables).
   */
  readonly network: 'all' | 'none' | 'proxy';
}
