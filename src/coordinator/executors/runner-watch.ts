import { agentOf, promptPatternsOf } from '../../agents/agents.js';
import type { Plan } from '../../core/plan/plan.js';
import type { Clock } from '../../core/ports/clock.js';
import type { StorePort } from '../../core/ports/store-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { Config, ExecutorProfile } from '../../core/settings/config.js';
import { LaneWatch } from './lane-watch.js';
import type { RunnerEvents } from './live.js';

/**
 * The runner's lane watch: each lane judged by its child's scope and its executor's prompt
 * patterns (an agent's screen is animated, a command's is not); a stall journaled.
 */
export function runnerWatch(d: {
  plan: () => Plan;
  profileOf(task: string): { profile: ExecutorProfile };
  config: Config;
  clock: Clock;
  worktrees: WorktreePort;
  store: Pick<StorePort, 'journal'>;
  health: RunnerEvents['health'];
}): LaneWatch {
  return new LaneWatch({
    scopeOf: (task) => d.plan().children.find((c) => c.id === task)?.scope ?? ['**'],
    promptPatternsOf: (task) => promptPatternsOf(d.profileOf(task).profile),
    animated: (task) => agentOf(d.profileOf(task).profile).sessions,
    stallTimeoutMs: d.config.stall_timeout_ms,
    clock: d.clock,
    worktrees: d.worktrees,
    onChange: (task, health, what) => {
      if (what === 'stalled') d.store.journal('stalled', { task, quiet_ms: d.config.stall_timeout_ms });
      d.health(task, health, what);
    },
  });
}
