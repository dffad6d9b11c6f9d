import { unknownWorktrees } from '../../core/rules/unknown-worktrees.js';
import type { StorePort } from '../../core/ports/store-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import { worktreesFromFiles } from '../../git/worktree/worktree-files.js';

// At start and resume (DESIGN §7): worktrees under the lanes root that the record does not
// know (core/rules/unknown-worktrees.ts) are reported and left alone.

export async function reportUnknownWorktrees(ctx: {
  lanesRoot: string;
  worktrees: WorktreePort;
  store: StorePort;
  batchId: string;
  notice: (text: string) => void;
  /**
   * Where every lane is local (no machines), the worktrees are read from git's files under
   * the common dir, as the preflight reads them: a process less before the first tick.
   */
  commonDir?: string | undefined;
  machines?: unknown;
}): Promise<void> {
  const wt = ctx.worktrees;
  const real = async (path: string) => (await wt.realpath(path)) ?? path;
  const rootReal = await real(ctx.lanesRoot);
  const record = ctx.store.readRecord();
  const lanes = record.children.flatMap((c) => (c.lane ? [c.lane.path] : []));
  const known = new Set(await Promise.all(lanes.map(real)));
  const fromFiles = ctx.commonDir !== undefined && !ctx.machines ? worktreesFromFiles(ctx.commonDir) : null;
  const listed = fromFiles ?? (await wt.list());
  const worktrees = await Promise.all(listed.map(async (w) => ({ ...w, real: await real(w.path) })));
  for (const w of unknownWorktrees({ worktrees, lanesRoot: rootReal, known, batchId: ctx.batchId })) {
    ctx.store.journal('worktree-unknown', { path: w.path, branch: w.branch });
    ctx.notice(`unknown worktree under the lanes root (left alone): ${w.path}`);
  }
}
