import { GitSession, SessionClosed } from './git-session.js';

// Ref changes through one `git update-ref --stdin` kept open per repository: each change is
// a transaction (start, the updates, prepare, commit) that either applies whole or not at
// all. A compare-and-swap that finds the ref elsewhere fails the prepare; git then ends,
// and the next transaction starts a new process (docs/DECISIONS.md "Git speed").

export class RefUpdater {
  private readonly session: GitSession;

  constructor(cwd: string) {
    this.session = new GitSession(cwd, ['update-ref', '--stdin']);
  }

  warm(): void {
    this.session.warm();
  }

  close(): void {
    this.session.close();
  }

  /**
   * Applies `commands` (update-ref --stdin lines: `update <ref> <new> <old>`, `delete <ref>
   * <old>`, `option no-deref`) as one transaction. False when git refused it (a ref was not
   * where the transaction expected it, or a name is not valid): nothing changed then.
   */
  async transaction(commands: readonly string[]): Promise<boolean> {
    if (commands.some((c) => /[\n\r]/.test(c))) return false;
    try {
      return await this.session.request(async (write, read) => {
        write(`start\n${commands.map((c) => `${c}\n`).join('')}prepare\ncommit\n`);
        for (const step of ['start', 'prepare', 'commit']) {
          if ((await read.line()) === `${step}: ok`) continue;
          this.session.close(); // an answer out of step: the next transaction starts afresh
          return false;
        }
        return true;
      });
    } catch (error) {
      if (error instanceof SessionClosed) return false;
      throw error;
    }
  }

  /** Compare-and-swap a ref: true when it moved from `expected` to `next`. */
  compareAndSwap(ref: string, next: string, expected: string): Promise<boolean> {
    return this.transaction([`update ${ref} ${next} ${expected}`]);
  }
}
