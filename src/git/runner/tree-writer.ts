import { GitSession } from './git-session.js';
import type { TreeEntry } from './object-reader.js';

// Tree objects written through one `git mktree -z --batch` kept open per repository: lanes
// lists the entries, git sorts and checks them (each object must exist, with the type its
// mode says) and stores the tree, answering its name at once (docs/DECISIONS.md "Git speed").

export class TreeWriter {
  private readonly session: GitSession;

  /** `written`: told of each tree written (the object reader keeps it). */
  constructor(
    cwd: string,
    private readonly written: (sha: string, entries: readonly TreeEntry[]) => void = () => {},
  ) {
    this.session = new GitSession(cwd, ['mktree', '-z', '--batch']);
  }

  warm(): void {
    this.session.warm();
  }

  close(): void {
    this.session.close();
  }

  /** Writes a tree of `entries` (any order); its object name. */
  write(entries: readonly TreeEntry[]): Promise<string> {
    const text = entries.map((e) => `${e.mode} ${typeOf(e.mode)} ${e.sha}\t${e.name}\0`).join('') + '\0';
    // (writing a tree again writes the same object: safe to repeat after a closed session)
    return this.session.ask(
      text,
      async (read) => {
        const sha = await read.line();
        if (!/^[0-9a-f]{40,64}$/.test(sha)) throw new Error(`git mktree answered ${JSON.stringify(sha)}`);
        this.written(sha, entries);
        return sha;
      },
      true,
    );
  }
}

function typeOf(mode: string): 'tree' | 'commit' | 'blob' {
  if (/^0*40000$/.test(mode)) return 'tree';
  return mode === '160000' ? 'commit' : 'blob';
}
