import type { WorktreeInfo } from '../ports/worktree-port.js';

// Worktrees under the lanes root that the batch does not know (DESIGN §7): reported when
// the coordinator starts, never deleted. A lane a crash left provisioned but not admitted
// (on one of this batch's lane branches) is no stranger: the next provision reuses it.
// Paths are compared real (symlinks resolved) by the caller.

export interface UnknownWorktreeFacts {
  /** Every worktree of the repository, with its real path. */
  worktrees: readonly (WorktreeInfo & { real: string })[];
  /** The lanes root, real. */
  lanesRoot: string;
  /** The real paths of the lanes the record knows. */
  known: ReadonlySet<string>;
  batchId: string;
}

export function unknownWorktrees(facts: UnknownWorktreeFacts): WorktreeInfo[] {
  return facts.worktrees
    .filter((w) => w.real.startsWith(`${facts.lanesRoot}/`) && !facts.known.has(w.real))
    .filter((w) => !w.branch?.startsWith(`lane/${facts.batchId}/`))
    .map(({ path, head, branch }) => ({ path, head, branch }));
}
