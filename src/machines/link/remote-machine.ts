import type { MachineLink } from './machine-link.js';
import type { MachineObjects } from './objects.js';

// One machine as the routed ports use it: its op client and its objects. An op that names
// commits has them pushed first; an op that answers with a commit made there has it fetched
// before the answer is returned, so the coordinator's own git can read every commit it is
// handed (integration stays local: DESIGN "Machines").

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function commitsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string' && SHA.test(value)) out.push(value);
  else if (Array.isArray(value)) for (const v of value) commitsIn(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) commitsIn(v, out);
  return out;
}

/** The batch and child of a lane path (`…/<batch>/<child>`) or a lane branch (`lane/<batch>/<child>`). */
export function laneIds(pathOrBranch: string): { batch: string; child: string } {
  const parts = pathOrBranch.split('/');
  return { batch: parts.at(-2) ?? 'batch', child: parts.at(-1) ?? 'child' };
}

export class RemoteMachine {
  constructor(
    readonly link: MachineLink,
    readonly objects: MachineObjects,
  ) {}

  get name(): string {
    return this.link.name;
  }

  /** The folder every lane of this repository on this machine is in. */
  get lanesPrefix(): string {
    return `${this.link.root}/lanes/${this.link.name}/${this.link.repo}/`;
  }

  holdsPath(path: string): boolean {
    return path.startsWith(this.lanesPrefix);
  }

  /** The path of a child's lane there. */
  lanePath(batch: string, child: string): string {
    return `${this.lanesPrefix}${batch}/${child}`;
  }

  /**
   * `op` with `args`: the commits they name pushed first; `lane` (a lane path or branch):
   * the commits of the answer fetched back under that lane's ref.
   */
  async op<T>(op: string, args: Record<string, unknown>, lane?: string): Promise<T> {
    await this.objects.push(commitsIn(args));
    const value = await this.link.call<T>(op, args);
    if (lane !== undefined) {
      const { batch, child } = laneIds(lane);
      for (const commit of commitsIn(value)) await this.objects.fetch(commit, batch, child);
    }
    return value;
  }
}
