import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, independentPlan, makeRepo, tempDir, writeJson } from './fixtures.js';
import { cannotMakeMachine, type BenchMachine, startBenchMachine } from './ssh-machine.js';
import { median, round, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// remote_lane_overhead: one trivial `script` child as a lane on a loopback sshd machine
// (bench/ssh-machine.ts) against the same child as a local lane, paired in the same run.
// ssh_processes_per_lane: the coordinator's ssh clients and the machine user's sshd
// processes while N lanes run there at once (one shared connection: flat in N).
// ssh_ops: where a remote lane's time goes, every ssh the coordinator ran (an op of the
// side script by its name, a git push/fetch, the master) counted and timed by a logging
// ssh_command in front of the real ssh, in a run of its own.
// BENCH_BEFORE_CLI=<an older build's dist/lanes/main.js>: each run times the remote lane
// with that build too, so a change's before and after are measured in the same run.

function skipped(name: string, why: string): Figure {
  return { name, value: NaN, min: NaN, max: NaN, target: NaN, unit: '', met: true, detail: {}, skipped: why };
}

async function machineRepo(machine: BenchMachine, sshCommand = machine.sshCommand): Promise<string> {
  const repo = await makeRepo(tempDir('lanes-bench-remote-'));
  writeFileSync(
    join(repo, 'lanes.config.json'),
    `${JSON.stringify({ machines: [{ name: machine.name, ssh: machine.name, slots: 8 }], ssh_command: sshCommand })}\n`,
  );
  await execa('git', ['-C', repo, 'add', 'lanes.config.json']);
  await execa('git', ['-C', repo, 'commit', '-q', '-m', 'machines']);
  return repo;
}

async function batch(repo: string, plan: object, cli = CLI): Promise<void> {
  const path = writeJson(join(repo, '..', 'plan.json'), plan);
  const r = await execa(process.execPath, [cli, '-C', repo, 'start', path, '--yes', '--headless'], {
    reject: false,
  });
  if (r.exitCode !== 0) throw new Error(`lanes batch failed (${r.exitCode}): ${r.stderr.slice(-800)}`);
}

export async function remoteLaneOverhead(runs: number): Promise<Figure> {
  const why = cannotMakeMachine();
  if (why) return skipped('remote_lane_overhead', why);
  const machine = await startBenchMachine();
  try {
    const local: number[] = [];
    const remote: number[] = [];
    const before: number[] = [];
    const beforeCli = process.env.BENCH_BEFORE_CLI;
    for (let i = 0; i < runs; i++) {
      const here = await makeRepo(tempDir('lanes-bench-local-'));
      local.push(await timeIt(() => batch(here, independentPlan('bench', 1, 1))));
      const there = await machineRepo(machine);
      remote.push(await timeIt(() => batch(there, independentPlan('bench', 1, 1))));
      if (beforeCli) {
        const old = await machineRepo(machine);
        before.push(await timeIt(() => batch(old, independentPlan('bench', 1, 1), beforeCli)));
      }
    }
    const ops = await opProfile(machine, 6);
    const opsBefore = beforeCli ? await opProfile(machine, 6, beforeCli) : null;
    if (opsBefore)
      console.log(
        `remote_lane_before: ${(median(before) / 1000).toFixed(2)} s a remote lane with ${beforeCli} (median of ${runs}; ratio ${median(before.map((x, i) => x / local[i]!)).toFixed(2)}); 6 lanes ${(opsBefore.ms / 1000).toFixed(1)} s, ${opsBefore.perLane.toFixed(1)} ssh runs a lane: ${opsBefore.summary}`,
      );
    const ratios = remote.map((x, i) => x / local[i]!);
    const value = median(ratios);
    console.log(
      `remote_lane_seconds: remote ${(median(remote) / 1000).toFixed(2)} s, local ${(median(local) / 1000).toFixed(2)} s (medians of ${runs})`,
    );
    console.log(
      `remote_ops_per_lane: ${ops.perLane.toFixed(1)} ssh runs a lane (6 lanes, ${(ops.ms / 1000).toFixed(1)} s batch): ${ops.summary}`,
    );
    if (ops.servedPerLane > 0)
      console.log(
        `remote_served_ops_per_lane: ${ops.servedPerLane.toFixed(1)} ops a lane answered by the side server: ${JSON.stringify(ops.served)}`,
      );
    return {
      name: 'remote_lane_overhead',
      value,
      min: Math.min(...ratios),
      max: Math.max(...ratios),
      // (no target in the issue: a figure to watch, its absolute seconds beside it)
      target: NaN,
      unit: 'x',
      met: true,
      detail: {
        remote_ms: remote.map(round),
        local_ms: local.map(round),
        remote_median_s: round(median(remote) / 1000),
        local_median_s: round(median(local) / 1000),
        six_lanes_ms: round(ops.ms),
        ssh_runs_per_lane: round(ops.perLane),
        ssh_runs: ops.byKind,
        served_ops_per_lane: round(ops.servedPerLane),
        served_ops: ops.served,
        ...(opsBefore
          ? {
              before_cli: beforeCli,
              before_remote_ms: before.map(round),
              before_remote_median_s: round(median(before) / 1000),
              before_six_lanes_ms: round(opsBefore.ms),
              before_ssh_runs_per_lane: round(opsBefore.perLane),
              before_ssh_runs: opsBefore.byKind,
            }
          : {}),
      },
    };
  } finally {
    await machine.close();
  }
}

/** A logging ssh in front of the real one: each run's kind and milliseconds, one a line. */
function loggingSsh(dir: string): { argv0: string; log: string } {
  const log = join(dir, 'ssh-runs.log');
  const argv0 = join(dir, 'ssh-logged');
  writeFileSync(log, '');
  writeFileSync(`${log}.served`, '');
  writeFileSync(
    argv0,
    `#!/bin/sh
case " $* " in *" -N "*) echo "master 0" >> '${log}'; exec ssh "$@";; esac
t0=$(date +%s%N)
case "$*" in
  *machine.js*serve*)
    tee -a '${log}.served' | ssh "$@"; rc=$?; kind=server;;
  *machine.js*op*)
    f=$(mktemp); tee "$f" | ssh "$@"; rc=$?
    kind=$(head -c 300 "$f" | sed -n 's/^{"op":"\\([^"]*\\)".*/\\1/p'); rm -f "$f";;
  *git-receive-pack*) ssh "$@"; rc=$?; kind=git-push;;
  *git-upload-pack*) ssh "$@"; rc=$?; kind=git-fetch;;
  *" -O "*) ssh "$@"; rc=$?; kind=control;;
  *) ssh "$@"; rc=$?; kind=shell;;
esac
echo "\${kind:-op?} $(( ($(date +%s%N) - t0) / 1000000 ))" >> '${log}'
exit $rc
`,
    { mode: 0o755 },
  );
  return { argv0, log };
}

async function opProfile(machine: BenchMachine, n: number, cli = CLI) {
  const dir = tempDir('lanes-bench-ops-');
  const ssh = loggingSsh(dir);
  const repo = await machineRepo(machine, [ssh.argv0, ...machine.sshCommand.slice(1)]);
  const ms = await timeIt(() => batch(repo, independentPlan('ops', n, n), cli));
  const byKind: Record<string, { runs: number; ms: number }> = {};
  let total = 0;
  for (const line of readFileSync(ssh.log, 'utf8').split('\n')) {
    const [kind, took] = line.split(' ');
    if (!kind) continue;
    const entry = (byKind[kind] ??= { runs: 0, ms: 0 });
    entry.runs++;
    entry.ms += Number(took);
    total++;
  }
  // (the ops the long-lived side script answered: one request a line, its time not logged)
  const served: Record<string, number> = {};
  for (const line of readFileSync(`${ssh.log}.served`, 'utf8').split('\n'))
    if (line) {
      const op = (JSON.parse(line) as { request: { op: string } }).request.op;
      served[op] = (served[op] ?? 0) + 1;
    }
  const servedOps = Object.values(served).reduce((a, b) => a + b, 0);
  const summary = Object.entries(byKind)
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([kind, e]) => `${kind} ${e.runs}x ${Math.round(e.ms / e.runs)} ms`)
    .join(', ');
  return { ms, perLane: total / n, byKind, summary, served, servedPerLane: servedOps / n };
}

/** Every process now: its pid, its parent's, its program and its command line. */
async function processTable(): Promise<{ pid: number; ppid: number; comm: string; args: string }[]> {
  const r = await execa('ps', ['-e', '-o', 'pid=,ppid=,comm=,args=']);
  return String(r.stdout)
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(\S+)\s*(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), comm: m[3]!, args: m[4]! }));
}

/** The ssh clients under the coordinator `root`: its masters, its side servers, the rest (ops in flight). */
async function sshClientsOf(root: number): Promise<{ masters: number; servers: number; others: number }> {
  const table = await processTable();
  const mine = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of table)
      if (mine.has(p.ppid) && !mine.has(p.pid)) {
        mine.add(p.pid);
        grew = true;
      }
  }
  const ssh = table.filter((p) => mine.has(p.pid) && p.comm === 'ssh');
  const masters = ssh.filter((p) => p.args.includes('ControlMaster=yes')).length;
  const servers = ssh.filter((p) => /machine\.js'? '?serve/.test(p.args)).length;
  return { masters, servers, others: ssh.length - masters - servers };
}

async function sessionsRunning(machine: BenchMachine): Promise<number> {
  const r = await execa('tmux', ['-L', 'lanes', 'list-sessions', '-F', '#{session_name}'], {
    reject: false,
    uid: machine.uid,
    env: { TMUX_TMPDIR: '/tmp' },
  });
  return r.exitCode === 0 ? String(r.stdout).split('\n').filter(Boolean).length : 0;
}

/** Ssh clients of the coordinator and sshd processes of the machine's user while n lanes run there. */
async function countWhileRunning(machine: BenchMachine, n: number) {
  const repo = await machineRepo(machine);
  const gate = join(machine.home, `gate-${n}`);
  const plan = independentPlan(`ssh${n}`, n, n) as { children: { run: string }[] };
  for (const child of plan.children) child.run = `while [ ! -f '${gate}' ]; do sleep 0.1; done; ${child.run}`;
  const path = writeJson(join(repo, '..', 'plan.json'), plan);
  const run = execa(process.execPath, [CLI, '-C', repo, 'start', path, '--yes', '--headless'], {
    reject: false,
  });
  const open = async () => {
    writeFileSync(gate, '');
    return run;
  };
  const clients: { masters: number; servers: number; others: number }[] = [];
  const sshd: number[] = [];
  try {
    const deadline = Date.now() + 120_000;
    while ((await sessionsRunning(machine)) < n) {
      if (Date.now() > deadline) throw new Error(`${n} lanes did not start on the machine`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (let i = 0; i < 10; i++) {
      clients.push(await sshClientsOf(run.pid!));
      sshd.push((await machine.processes()).filter((p) => /^sshd/.test(p.args)).length);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await open();
    throw error;
  }
  const r = await open();
  if (r.exitCode !== 0)
    throw new Error(`lanes batch failed (${r.exitCode}): ${String(r.stderr).slice(-800)}`);
  return { clients, sshd };
}

export async function sshProcessesPerLane(lanes: readonly number[]): Promise<Figure> {
  const why = cannotMakeMachine();
  if (why) return skipped('ssh_processes_per_lane', why);
  const machine = await startBenchMachine();
  try {
    const at: Record<string, Record<string, number>> = {};
    for (const n of lanes) {
      const { clients, sshd } = await countWhileRunning(machine, n);
      const max = (f: (c: (typeof clients)[number]) => number) => Math.max(...clients.map(f));
      at[n] = {
        masters: max((c) => c.masters),
        side_servers: max((c) => c.servers),
        ops_in_flight_max: max((c) => c.others),
        ops_in_flight_median: median(clients.map((c) => c.others)),
        machine_sshd: Math.max(...sshd),
      };
      const e = at[n]!;
      console.log(
        `ssh_processes at ${n} lane(s): coordinator: ${e.masters} master, ${e.side_servers} side server, ${e.ops_in_flight_median} op client(s) in flight (max ${e.ops_in_flight_max}); machine: ${e.machine_sshd} sshd of its user`,
      );
    }
    // (the figure: what stays while lanes run, the connection and its side server, at the
    // most lanes over at one; flat is 1. Ops in flight come and go, printed beside it.)
    const lasting = (e: Record<string, number>) => e.masters! + e.side_servers! + e.machine_sshd!;
    const value = lasting(at[lanes[lanes.length - 1]!]!) / lasting(at[lanes[0]!]!);
    return {
      name: 'ssh_processes_per_lane',
      value,
      min: value,
      max: value,
      target: 1,
      unit: 'x',
      met: value <= 1,
      detail: { lanes, at },
    };
  } finally {
    await machine.close();
  }
}
