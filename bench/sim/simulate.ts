import { performance } from 'node:perf_hooks';
import { parsePlanText } from '../../src/core/plan/plan.js';
import { newBatchRecord } from '../../src/core/records/new-batch-record.js';
import { startAttempt } from '../../src/core/records/kernel.js';
import type { Report } from '../../src/core/records/report.js';
import type { TickPorts } from '../../src/core/ports/tick-ports.js';
import { tick } from '../../src/core/tick/tick.js';
import type { ExitNotice, TickInput } from '../../src/core/tick/tick.js';
import type { LaneOffer } from '../../src/core/steps/admission.js';
import { EventQueue } from './event-queue.js';
import type { SimEvent } from './event-queue.js';
import { lognormal, prng } from './prng.js';
import { sha, SimGit, simQa, SimStore } from './sim-ports.js';

// A discrete-event simulation of one batch over a pool of machines (docs/BENCH.md
// "Machines, simulated"). The real tick decides everything (schedule, admission, QA's
// verdict from the checks, the delivery commit, integration, release) over ports in
// memory; the simulation plays the coordinator's part (lane jobs, executors, the exit
// queue) and the clock. Executors and lane jobs take simulated time on their machines; the
// single writer (the tick) takes the wall time it really took, measured here, so the
// writer's share of the makespan is its measured service time.

export interface SimOptions {
  children: number;
  machines: number;
  slotsPerMachine: number;
  seed: number;
  /** The executor's run time (one attempt): lognormal with this median and sigma. */
  medianMs: number;
  sigma: number;
  /** The share of attempts whose QA fails (the child goes round again: rework). */
  qaFailRate: number;
  /** A lane made on its machine (the cache's worktree, new objects pushed), off the writer. */
  provisionMs: number;
  /** A lane removed after its integration, off the writer. */
  releaseMs: number;
  /** Added to the writer's service time per integration: its git plumbing, measured apart. */
  gitMsPerIntegration?: number;
  /** A model writer instead of the measured one (tests): this much per tick and per integration. */
  modelWriter?: { perTickMs: number; perIntegrationMs: number };
}

export interface SimResult {
  children: number;
  machines: number;
  slots: number;
  makespanMs: number;
  attempts: number;
  qaFailures: number;
  ticks: number;
  /** Lanes the tick refused (made on a machine placement no longer put their child on, mostly). */
  refusals: number;
  /** Time the writer was busy (ticks), simulated ms (= measured wall ms, plus git's share). */
  writerBusyMs: number;
  /** The tick's own measured wall time, summed (without git's share). */
  tickWallMs: number;
  /** The tick's CPU time (user + system), summed: the wall time less what waited for a core. */
  tickCpuMs: number;
  throughputPerHour: number;
  writerUtilisation: number;
  /** The writer's service time per child integrated: busy time / children. */
  writerMsPerChild: number;
  /** When half the children were integrated: the rate up to then leaves the heavy tail out. */
  halfMs: number;
  halfThroughputPerHour: number;
}

const CHECKS = [{ id: 'ok', run: ['true'], timeout_ms: 1000 }];

/** The same draw for a child's nth attempt whatever order the events come in. */
function attemptDraw(seed: number, task: string, attempt: number): () => number {
  let h = 2166136261 ^ seed;
  for (const ch of `${task}#${attempt}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return prng(h);
}

export async function simulate(o: SimOptions): Promise<SimResult> {
  const ids = Array.from({ length: o.children }, (_, i) => `c${String(i).padStart(4, '0')}`);
  const slots = o.machines * o.slotsPerMachine;
  const planText = JSON.stringify({
    batch: 'sim',
    max_parallel: slots,
    children: ids.map((id) => ({ id, goal: `do ${id}`, scope: [`${id}/**`], acceptance: CHECKS })),
  });
  const plan = parsePlanText(planText, 'plan.json');
  const start = Date.UTC(2026, 11, 1, 9, 0, 0);
  const record = newBatchRecord({
    plan,
    baseHead: sha(1),
    // (a failure limit no child reaches: every child integrates, so the makespan is the batch's)
    budget: { max_children: o.children, qa_failure_limit: 1000 },
    maxParallel: slots,
    now: new Date(start).toISOString(),
  });
  const git = new SimGit(record.base_head);
  git.tips.set(record.branch, record.base_head);
  const store = new SimStore(record, plan);
  const failing = new Set<string>();
  let now = 0;
  let runs = 0;
  const ports: TickPorts = {
    store,
    git,
    qa: simQa(failing),
    clock: { now: () => new Date(start + Math.round(now)) },
    newRunId: () => `run-${++runs}`,
    integrationChecks: 'changed',
    crashPoint: () => {},
  };

  const queue = new EventQueue();
  // The pool as the config would name it; which child starts where is the core's
  // placement (src/core/machines/placement.ts), through the tick like every decision.
  const machines = Array.from({ length: o.machines }, (_, i) => ({
    name: `m${i + 1}`,
    slots: o.slotsPerMachine,
  }));
  /** The machine each child's lane is being made on (until its executor starts). */
  const provisioning = new Map<string, string>();
  const running = new Set<string>();
  const releasing = new Set<string>();
  const attemptsOf = new Map<string, number>();
  let offers: LaneOffer[] = [];
  let exits: ExitNotice[] = [];
  let wake = false; // a release done: the next tick records it
  let attempts = 0;
  let qaFailures = 0;
  let ticks = 0;
  let refusals = 0;
  let writerBusyMs = 0;
  let tickWallMs = 0;
  let tickCpuMs = 0;
  let integratedSoFar = 0;
  let halfMs: number | null = null;

  const machineOf = new Map<string, string>();
  const paths = new Map<string, string>(); // (a lane's path names its machine: /lanes/<machine>/<task>)
  const lanePath = (task: string) => paths.get(task)!;
  const apply = (e: SimEvent) => {
    if (e.kind === 'lane-ready') {
      if (provisioning.get(e.task) !== e.machine) return; // (placement sent it elsewhere since)
      // The lane job makes the lane at the head as it is now (a tick that admits lanes
      // integrates nothing, so it is still the head when the offer is taken).
      git.lanes.set(lanePath(e.task), { branch: `lane/sim/${e.task}`, head: git.tips.get(record.branch)! });
      offers.push({ task_id: e.task, path: lanePath(e.task), machine: machineOf.get(e.task)! });
    } else if (e.kind === 'exit') exits.push({ task_id: e.task, code: 0, signal: null, host: 'sim' });
    else {
      git.lanes.delete(lanePath(e.task));
      releasing.delete(e.task);
      wake = true;
    }
  };
  const startExecutor = (task: string) => {
    const n = (attemptsOf.get(task) ?? 0) + 1;
    attemptsOf.set(task, n);
    attempts++;
    const random = attemptDraw(o.seed, task, n);
    const duration = lognormal(random, o.medianMs, o.sigma);
    if (random() < o.qaFailRate) failing.add(task);
    else failing.delete(task);
    const kernel = store.kernel(task)!;
    const begun = { host: 'sim', paneId: null, pid: null, pidStart: null, statusPath: null };
    store.writeKernel(startAttempt(kernel, begun, ports.clock.now().toISOString()));
    running.add(task);
    queue.push({ at: now + duration, kind: 'exit', task });
  };
  const carryOut = (report: Report) => {
    // A lane refused for any reason but an older head is not offered again: the child's
    // next provision makes a new one (where placement then puts it).
    refusals += report.lane_refusals.length;
    for (const r of report.lane_refusals)
      if (r.reason !== 'batch_lane_base_mismatch') provisioning.delete(r.task_id);
    for (const h of report.handoffs) {
      // A child is provisioned once a machine: when placement puts it on another machine
      // than the one its lane is being made on, a lane is made there (the other is left).
      if (h.action === 'provision' && provisioning.get(h.task_id) !== h.machine) {
        paths.set(h.task_id, `/lanes/${h.machine}/${h.task_id}`);
        machineOf.set(h.task_id, h.machine);
        provisioning.set(h.task_id, h.machine);
        queue.push({ at: now + o.provisionMs, kind: 'lane-ready', task: h.task_id, machine: h.machine });
      } else if (h.action === 'executor' && h.next_obligation === 'implement' && !running.has(h.task_id)) {
        provisioning.delete(h.task_id);
        startExecutor(h.task_id);
      } else if (h.action === 'release' && !releasing.has(h.task_id)) {
        releasing.add(h.task_id);
        queue.push({ at: now + o.releaseMs, kind: 'released', task: h.task_id });
      } else if (h.action === 'move-to-head') {
        git.lanes.get(h.lane_path)!.head = git.tips.get(record.branch)!;
        offers.push({ task_id: h.task_id, path: h.lane_path, machine: machineOf.get(h.task_id)! });
      }
    }
  };
  const writerTick = async (input: TickInput) => {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const report = await tick(ports, {
      ...input,
      machines,
      coordinated: true,
      releaseChecksClean: true,
      releasing: [...releasing],
    });
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const integrated = report.commits.length - integratedSoFar;
    integratedSoFar = report.commits.length;
    const service = o.modelWriter
      ? o.modelWriter.perTickMs + o.modelWriter.perIntegrationMs * integrated
      : wall + (o.gitMsPerIntegration ?? 0) * integrated;
    if (halfMs === null && integratedSoFar >= o.children / 2) halfMs = now + service;
    ticks++;
    tickWallMs += wall;
    tickCpuMs += (cpu.user + cpu.system) / 1000;
    writerBusyMs += service;
    now += service; // the writer is busy: what comes meanwhile waits for the next tick
    return report;
  };

  let report = await writerTick({});
  carryOut(report);
  while (report.batch_state !== 'completed') {
    if (offers.length === 0 && exits.length === 0 && !wake) {
      const next = queue.pop();
      if (!next)
        throw new Error(`the simulation stalled: batch ${report.batch_state}, ${report.next_action}`);
      now = Math.max(now, next.at);
      apply(next);
    }
    while (queue.peekTime() <= now) apply(queue.pop()!);
    wake = false;
    // As the coordinator does: a tick that admits lanes holds the exits for the next one.
    const input: TickInput = offers.length > 0 ? { offers } : { exited: exits };
    if (offers.length > 0) offers = [];
    else {
      for (const e of exits) running.delete(e.task_id);
      exits = [];
    }
    report = await writerTick(input);
    for (const e of input.exited ?? []) if (failing.has(e.task_id)) qaFailures++;
    carryOut(report);
  }
  const hours = now / 3_600_000;
  return {
    children: o.children,
    machines: o.machines,
    slots,
    makespanMs: now,
    attempts,
    qaFailures,
    ticks,
    refusals,
    writerBusyMs,
    tickWallMs,
    tickCpuMs,
    throughputPerHour: o.children / hours,
    writerUtilisation: writerBusyMs / now,
    writerMsPerChild: writerBusyMs / o.children,
    halfMs: halfMs!,
    halfThroughputPerHour: Math.ceil(o.children / 2) / (halfMs! / 3_600_000),
  };
}
