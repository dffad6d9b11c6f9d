import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { badInput } from '../../core/basics/errors.js';
import { noMachineLeft } from '../../core/machines/machines.js';
import type { Plan } from '../../core/plan/plan.js';
import { TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import type { TickPorts } from '../../core/ports/tick-ports.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { Config } from '../../core/settings/config.js';
import { executorProfiles } from '../../core/settings/config.js';
import type { CoordinatorMachines } from '../../coordinator/loop/machines.js';
import type { Host } from '../../hosts/host.js';
import { MachineHost } from '../../hosts/machine/machine-host.js';
import { RoutedHost } from '../../hosts/machine/routed-host.js';
import { MachinePool, type MachineView } from '../../machines/link/machine-pool.js';
import { laneIds } from '../../machines/link/remote-machine.js';
import { RoutedGit } from '../../machines/link/routed-git.js';
import { RoutedQa } from '../../machines/link/routed-qa.js';
import { RoutedWorktrees } from '../../machines/link/routed-worktrees.js';
import type { BatchFiles } from '../../store/batch-files.js';
import type { RepoPaths } from '../../store/state-dir.js';

// A batch's machines wired into the coordinator (issue 25): the pool checked and connected,
// the ports routed (a lane a machine holds goes to it, everything else local), the host
// routed (a lane's executor in a tmux session on its machine), and what each tick is told.
// Without `machines` in the config nothing of this is made: everything is local as before.

/** The side script beside this bundle (dist/lanes/machine.js). */
export function sideScriptPath(): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'machine.js');
}

/** The executor profiles the plan's children name (their own, the plan's, the config's default). */
function executorNames(plan: Plan, config: Config): Set<string> {
  return new Set(
    plan.children.flatMap((c) => {
      const name = c.executor ?? plan.executor ?? config.default_executor ?? (c.run ? 'script' : undefined);
      return name ? [name] : [];
    }),
  );
}

/** The programs a machine must have for the plan's executors (each profile's first word). */
export function executorPrograms(plan: Plan, config: Config): string[] {
  const profiles = executorProfiles(config);
  const names = executorNames(plan, config);
  const programs = [...names].flatMap((n) => {
    const program = profiles[n]?.argv[0];
    return program && !program.includes('{') ? [program] : [];
  });
  return [...new Set(programs)];
}

export interface BatchMachines {
  pool: MachinePool;
  views: MachineView[];
  ports<P extends TickPorts>(ports: P): P;
  worktrees(local: WorktreePort): WorktreePort;
  host(local: Host, tuiDrawn: boolean): Host;
  coordinator: CoordinatorMachines;
  close(): Promise<void>;
}

/** What opening the config's machines takes, whoever opens them (a batch, or a command without its coordinator). */
export function poolOptions(repo: RepoPaths, config: Config, machines: NonNullable<Config['machines']>) {
  return {
    machines,
    sshCommand: config.ssh_command,
    machineTimeoutMs: config.machine_timeout * 60_000,
    stateDir: repo.stateDir,
    repoRoot: repo.root,
    sideScript: sideScriptPath(),
  };
}

/**
 * The config's machines connected and checked (reachable with BatchMode, git, node, tmux,
 * the plan's executor programs, a writable root): null without `machines`. A machine that
 * fails is left out with its reason; none left: exit 2 naming each, nothing written.
 */
export async function openMachinePool(
  repo: RepoPaths,
  config: Config,
  plan: Plan,
): Promise<MachinePool | null> {
  if (!config.machines) return null;
  const pool = await MachinePool.open(
    {
      ...poolOptions(repo, config, config.machines),
      // (an agent's turn ends through the hook socket; a script has none)
      needsHook: [...executorNames(plan, config)].some((n) => n !== 'script'),
    },
    executorPrograms(plan, config),
  );
  const none = noMachineLeft(pool.currentViews());
  if (none !== null) {
    await pool.close();
    throw badInput('preflight_failed', none);
  }
  return pool;
}

/** The pool wired into one batch's coordinator (ports, worktrees, host, tick input). */
export function wireMachines(
  pool: MachinePool,
  repo: RepoPaths,
  batchId: string,
  config: Config,
  store: BatchFiles,
): BatchMachines {
  const router = pool.router;
  router.recordMachineOf = (branch) => {
    const { child } = laneIds(branch);
    return store.readRecord().children.find((c) => c.task_id === child)?.machine;
  };
  const views = pool.currentViews();
  let qa: RoutedQa | null = null;
  const coordinator: CoordinatorMachines = {
    slots: views.filter((v) => v.state !== 'left out').map((v) => ({ name: v.name, slots: v.slots })),
    unreachable: () => pool.unreachableMachines(),
    lost: () => pool.lostMachines(),
    watch: (wake) => pool.watch(wake),
    lanePath: (machine, task) => pool.remotes.get(machine)?.lanePath(batchId, task) ?? null,
    machineOf: (path) => router.byPath(path)?.name ?? 'local',
    prepare: (path, logPathFor) => (qa ? qa.prepare(path, logPathFor) : Promise.resolve(null)),
    hookArgv: (machine) => pool.hookArgv(machine),
    forwardHook: (machine, local) => pool.forwardHook(machine, batchId, local),
  };
  return {
    pool,
    views,
    ports(ports) {
      qa = new RoutedQa(ports.qa, router, repo.root, config);
      return { ...ports, git: new RoutedGit(ports.git, router), qa };
    },
    worktrees: (local) => new RoutedWorktrees(local, router),
    host: (local, tuiDrawn) =>
      new RoutedHost(
        local,
        (_task, lanePath) => router.byPath(lanePath)?.link ?? null,
        (client) => new MachineHost(client, { batchId, tuiDrawn }),
      ),
    coordinator,
    async close() {
      const record = store.readRecord();
      if (TERMINAL_BATCH_STATES.has(record.batch_state)) await pool.cleanBatch(batchId, record.children);
      await pool.close();
    },
  };
}
