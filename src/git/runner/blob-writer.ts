import { GitSession } from './git-session.js';

// Blob objects written from files through one `git hash-object -w --no-filters
// --stdin-paths` kept open per repository: a lane's exit staged by lanes (lane-staging.ts)
// has git hash and store only the files that are new or changed, without a process.
// `--no-filters`: only used where no attribute applies (worktree/checkout-settings.ts).

export class BlobWriter {
  private readonly session: GitSession;

  constructor(cwd: string) {
    this.session = new GitSession(cwd, ['hash-object', '-w', '--no-filters', '--stdin-paths']);
  }

  /** Starts git now (RepoSessions.warm). */
  warm(): void {
    this.session.warm();
  }

  close(): void {
    this.session.close();
  }

  /** Stores the file at `path` (absolute) as a blob; its object name. */
  write(path: string): Promise<string> {
    if (/[\n\r]/.test(path)) return Promise.reject(new Error(`a path git cannot read from a line: ${path}`));
    return this.session.ask(
      `${path}\n`,
      async (read) => {
        const sha = await read.line();
        if (!/^[0-9a-f]{40,64}$/.test(sha))
          throw new Error(`git hash-object answered ${JSON.stringify(sha)}`);
        return sha;
      },
      true, // (the same blob again: safe to repeat after a closed session)
    );
  }
}
