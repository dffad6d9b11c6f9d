import { resolveSettings } from '../../core/settings/batch-settings.js';
import { executorProfiles } from '../../core/settings/config.js';
import type { Config, ExecutorProfile } from '../../core/settings/config.js';
import type { Plan } from '../../core/plan/plan.js';

// Each child's executor profile, resolved once per plan: the lane watch asks on every
// chunk of output, and resolving means every child's preferences.

export interface ResolvedProfile {
  name: string;
  profile: ExecutorProfile;
}

export class ExecutorProfiles {
  private readonly resolved = new Map<string, ResolvedProfile>();

  constructor(
    private readonly config: Config,
    private plan: Plan,
  ) {}

  /** A new plan (a resume with another one): every profile is resolved again. */
  setPlan(plan: Plan): void {
    this.plan = plan;
    this.resolved.clear();
  }

  of(task: string): ResolvedProfile {
    let found = this.resolved.get(task);
    if (!found) {
      const name = resolveSettings(this.plan, this.config).executors[task] as string;
      found = { name, profile: executorProfiles(this.config)[name]! };
      this.resolved.set(task, found);
    }
    return found;
  }
}
