import { join } from 'node:path';
import type { Instance } from 'ink';
import { createElement } from 'react';
import { App } from '../../../components/App.js';
import type { TuiActions } from '../../../components/App.js';
import { limitsRefusal } from '../../core/ways-out/reopen.js';
import { Coordinator } from '../../coordinator/loop/coordinator.js';
import type { CoordinatorEvent } from '../../coordinator/loop/coordinator.js';
import { loadConfig } from '../../store/config-file.js';
import type { Host } from '../../hosts/host.js';
import type { BatchLock } from '../../store/lock.js';
import { batchPorts } from './batch-ports.js';
import { wireMachines, type BatchMachines } from './batch-machines.js';
import { RoutedHost } from '../../hosts/machine/routed-host.js';
import { LaneWorktrees } from '../../git/ports/lane-worktrees.js';
import { landBatch } from '../../coordinator/whole-batch/land-batch.js';
import { exitCodeForState } from '../exit-codes.js';
import { printEnding } from './ending.js';
import { makeHost } from './host-choice.js';
import { laneDiff, laneQaLog } from '../../tui/lane-views.js';
import { Notifier } from '../../tui/notify.js';
import { resizeSessions } from '../../tui/pane-layout.js';
import { TuiStore } from '../../tui/tui-store.js';
import type { Approval } from '../../core/ways-out/resume.js';
import type { RepoPaths } from '../../store/state-dir.js';
import type { MachinePool } from '../../machines/link/machine-pool.js';
import type { HostName } from './host-choice.js';

// The batch under the TUI, once confirmed: the coordinator in this process, its lanes in pty
// panes, the store the screen draws, until the user quits. Apart from run-tui.ts so that
// these modules (the coordinator, the hosts, xterm's and node-pty's) load while the
// confirmation is on the screen, not before its first frame.

export interface TuiRun {
  repo: RepoPaths;
  batchId: string;
  host: HostName;
  /** Held for the whole run; with `confirm`, taken by `create` after the `y`. */
  lock?: BatchLock;
  /** Lines of the confirmation screen, and what a `y` does (lock, then create the batch). */
  confirm?: { lines: string[]; create: () => Promise<BatchLock> };
  approval?: Approval;
  /** The machines, connected and checked at confirmation (null or absent: none). */
  machines?: MachinePool | null;
}

/** Runs the confirmed batch on the screen `instance` shows; holds `lock` until the end. */
export async function runConfirmedTui(
  run: TuiRun,
  instance: Instance,
  lock: BatchLock | undefined,
): Promise<number> {
  let machines: BatchMachines | null = null;
  try {
    const { PtyHost } = await import('../../hosts/pty/pty-host.js');
    const config = loadConfig(run.repo.root);
    let store: TuiStore | null = null;
    const localHost: Host = await makeHost(run.host, (text) => store?.notice(text));
    const localPorts = batchPorts(run.repo, run.batchId);
    machines = run.machines
      ? wireMachines(run.machines, run.repo, run.batchId, config, localPorts.store)
      : null;
    const host = machines ? machines.host(localHost, true) : localHost;
    const ports = machines ? machines.ports(localPorts) : localPorts;
    const notifier = new Notifier(config.notify, (data) => process.stdout.write(data));
    const shellHost = new PtyHost();
    const onEvent = (event: CoordinatorEvent) => {
      store?.onEvent(event);
      notifyFor(notifier, event);
    };
    const coordinator = new Coordinator({
      batchId: run.batchId,
      repoRoot: run.repo.root,
      commonDir: run.repo.commonDir,
      ports,
      worktrees: machines
        ? machines.worktrees(new LaneWorktrees(run.repo.root))
        : new LaneWorktrees(run.repo.root),
      config,
      host,
      ...(machines ? { machines: machines.coordinator } : {}),
      waitForHuman: true,
      onEvent,
      ...(run.approval ? { approval: run.approval } : {}),
    });
    store = new TuiStore(ports.store, ports.store.readPlan(), coordinator);
    let quit: () => void = () => {};
    const quitting = new Promise<void>((r) => (quit = r));
    const actions: TuiActions = {
      confirm: () => {},
      resume: () => {
        // (a budget_stopped batch goes on only with a larger budget: said, not thrown into the loop)
        const why = limitsRefusal(ports.store.readRecord(), {});
        if (why) store!.notice(`resume: ${why}: lanes resume --approve --budget N`);
        else coordinator.approve({ confirmationTime: ports.clock.now().toISOString() });
      },
      retry: (task) => coordinator.retry(task),
      review: (task, verdict) => coordinator.review({ task_id: task, verdict }),
      togglePause: () => coordinator.setPaused(!coordinator.paused),
      drop: (task) => coordinator.waysOut.drop(task),
      cancel: () => coordinator.waysOut.cancel(),
      land: () =>
        void landBatch(run.repo, run.batchId, {}).then(
          (summary) => store!.notice(summary),
          (error: unknown) => store!.notice(error instanceof Error ? error.message : String(error)),
        ),
      diff: (task) => laneDiff(ports.store, run.repo.root, task),
      qaLog: async (task) => laneQaLog(ports.store, task),
      openShell: async (task) => {
        const lane = ports.store.readRecord().children.find((c) => c.task_id === task)?.lane;
        if (!lane || store!.shells.has(task)) return;
        const logDir = ports.store.tasks.logDir(task);
        const shell = await shellHost.open({
          taskId: task,
          runId: 'shell',
          attempt: 0,
          cwd: lane.path,
          argv: [process.env.SHELL || 'sh'],
          env: { LANES_LANE: lane.path },
          logPath: join(logDir, 'shell.log'),
          statusPath: join(logDir, 'shell.status'),
        });
        store!.addShell(task, shell);
      },
      focusOutside: (task) => {
        const session = store!.sessions.get(task) as { focus?: () => Promise<void> } | undefined;
        if (!session?.focus) return false;
        void session.focus();
        return true;
      },
      resize: (cols, rows, cells) => {
        if (host instanceof PtyHost || host instanceof RoutedHost) host.setSize(cols, rows);
        shellHost.setSize(cols, rows);
        resizeSessions([...store!.sessions, ...store!.shells], { cols, rows }, cells);
      },
      runningInApp: () =>
        host.capabilities.inAppPane ? [...store!.sessions.values()].filter((s) => s.running).length : 0,
      quit: () => quit(),
    };
    instance.rerender(createElement(App, { store, actions }));
    const finished = coordinator.run();
    await Promise.race([quitting, finished]);
    coordinator.stop();
    const result = await finished;
    await host.dispose();
    await shellHost.dispose();
    store.dispose();
    instance.unmount();
    // (the same summary and ways on as a headless run: the screen is gone)
    printEnding(
      { stdout: (t) => void process.stdout.write(t), stderr: (t) => void process.stderr.write(t) },
      { result, batchId: run.batchId, pauseReason: coordinator.pauseReason },
    );
    return exitCodeForState(result.state, result.paused);
  } catch (error) {
    instance.unmount();
    throw error;
  } finally {
    await machines?.close();
    await lock?.release();
  }
}

const waitingEpisodes = new Map<string, number>();

/** A bell and OSC 9 once per: parked child, lane waiting for input (each episode), batch end. */
function notifyFor(notifier: Notifier, event: CoordinatorEvent): void {
  if (event.kind === 'report') {
    const r = event.report;
    for (const c of r.children)
      if (c.state === 'needs_human')
        notifier.notify(`parked:${c.task_id}:${c.reason}`, `lanes: ${c.task_id} needs you (${c.reason})`);
    if (r.batch_state !== 'running' && r.batch_state !== 'prepared')
      notifier.notify(
        `batch:${r.batch_state}:${r.commits.length}`,
        `lanes: batch ${r.batch_id} ${r.batch_state}`,
      );
  } else if (event.kind === 'health' && event.what === 'waiting') {
    const episode = (waitingEpisodes.get(event.task) ?? 0) + 1;
    waitingEpisodes.set(event.task, episode);
    notifier.notify(`waiting:${event.task}:${episode}`, `lanes: ${event.task} waits for input`);
  }
}
