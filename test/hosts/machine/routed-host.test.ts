import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lookForAttempt } from '../../../src/coordinator/executors/executor-recovery.js';
import type { Attempt } from '../../../src/core/records/kernel.js';
import { HeadlessHost } from '../../../src/hosts/headless-host.js';
import type { Host } from '../../../src/hosts/host.js';
import { MachineHost } from '../../../src/hosts/machine/machine-host.js';
import { RoutedHost } from '../../../src/hosts/machine/routed-host.js';
import type { MachineClient } from '../../../src/machines/link/machine-client.js';
import { tempDir } from '../../helpers/repo.js';
import { endedAfterEach, localMachine, remoteLaunch, testBatch, tmuxSessionsOf } from './local-machine.js';

// One host for a batch whose lanes are on several machines: each lane's open, reattach and
// closeLane go to its machine's host, the coordinator's own lanes to the local host.

const { hosts, batches } = endedAfterEach<Host>();

function routed(batch: string, machines: Record<string, MachineClient>): RoutedHost {
  const host = new RoutedHost(
    new HeadlessHost(),
    (task) => machines[task] ?? null,
    (client) => new MachineHost(client, { batchId: batch, tuiDrawn: false, pollMs: 50 }),
  );
  hosts.push(host);
  return host;
}

describe('the routed host', () => {
  it("opens each lane on its machine's host and the coordinator's own lanes on the local host", async () => {
    const batch = testBatch();
    batches.push(batch);
    const [m1, m2] = [localMachine('m1'), localMachine('m2')];
    const host = routed(batch, { a: m1, b: m2 });
    expect(host.name).toBe('headless');
    expect(host.capabilitiesOf('a', '/x').agents).toBe('headless');
    const a = await host.open(remoteLaunch(m1, batch, 'a', ['sh', '-c', 'echo on m1']));
    const b = await host.open(remoteLaunch(m2, batch, 'b', ['sh', '-c', 'echo on m2']));
    const here = tempDir('lanes-local-lane-');
    const logs = join(tempDir('lanes-state-'), 'logs', 'c');
    const c = await host.open({
      ...remoteLaunch(m1, batch, 'c', ['sh', '-c', 'echo here']),
      cwd: here,
      logPath: join(logs, 'attempt-1.log'),
      statusPath: join(logs, 'attempt-1.status'),
    });
    expect([a.host, b.host, c.host]).toEqual(['machine', 'machine', 'headless']);
    for (const s of [a, b, c]) expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(m1.asked).toContain('session.start');
    expect(m2.asked).toContain('session.start');
    expect(a.recentLines(1)).toEqual(['on m1']);
    expect(b.recentLines(1)).toEqual(['on m2']);
  });

  it('finds a remote attempt again after a restart, through the recovery the coordinator runs', async () => {
    const batch = testBatch();
    batches.push(batch);
    const m1 = localMachine('m1');
    const go = join(m1.root, 'go');
    const spec = remoteLaunch(m1, batch, 'r', [
      'sh',
      '-c',
      'while [ ! -e "$1" ]; do sleep 0.02; done; exit 6',
      'sh',
      go,
    ]);
    const before = routed(batch, { r: m1 });
    const session = await before.open(spec);
    await before.dispose();

    const after = routed(batch, { r: m1 });
    const open: Attempt = {
      n: 1,
      started_at: new Date().toISOString(),
      ended_at: null,
      exit_code: null,
      signal: null,
      host: session.host,
      pane_id: session.paneId,
      pid: session.pid,
      pid_start: null,
      status_path: spec.statusPath,
      session_id: null,
      resumed: false,
      hook_token_sha256: null,
      turns: 0,
      closed_by: null,
    };
    const ids = { task_id: 'r', run_id: spec.runId, lane_path: spec.cwd };
    const found = await lookForAttempt(after, open, dirname(spec.logPath), ids);
    expect(found.kind).toBe('pane');
    writeFileSync(go, '');
    if (found.kind === 'pane') expect(await found.session.exited).toEqual({ code: 6, signal: null });
  });

  it("closes a remote lane's sessions on its machine", async () => {
    const batch = testBatch();
    batches.push(batch);
    const m1 = localMachine('m1');
    const host = routed(batch, { x: m1 });
    const never = join(m1.root, 'never');
    mkdirSync(dirname(never), { recursive: true });
    const spec = remoteLaunch(m1, batch, 'x', [
      'sh',
      '-c',
      'while [ ! -e "$1" ]; do sleep 0.02; done',
      'sh',
      never,
    ]);
    const session = await host.open(spec);
    await host.closeLane('x', spec.cwd);
    await session.exited;
    expect(tmuxSessionsOf(batch)).toEqual([]);
  });
});
