import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import {
  events,
  fileChild,
  lanesProcess,
  leanRepo,
  readRecord,
  spawnLanes,
  stateDir,
  waitForGate,
  writePlan,
} from './support.js';

// `lanes cancel` / `lanes drop` handed to a running coordinator (docs/RELIABILITY.md,
// "Adversarial pass"): the coordinator that holds the batch can die before it carries the
// request out. The command then sees the holder gone and does it itself, at once, instead
// of waiting out its hand-over time and failing.

const requests = (repo: string, batch: string) => {
  const dir = join(stateDir(repo), 'batches', batch, 'requests');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('a way out handed to a coordinator that dies', () => {
  it('cancel: the holder is killed while the request waits; cancel takes the batch over and ends it', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'hand',
      executor: 'script',
      children: [fileChild('A', [], waitForGate(gate))],
    });
    const coordinator = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => events(repo, 'hand').includes('executor-spawned:A'), 'A to run', { timeoutMs: 60_000 });
    process.kill(coordinator.pid!, 'SIGSTOP'); // alive, holding the lock, deaf to requests
    const cancel = spawnLanes(ctx, ['-C', repo, 'cancel', 'hand']);
    await until(() => requests(repo, 'hand').length > 0, 'the cancel request to be left');
    process.kill(coordinator.pid!, 'SIGKILL');
    await coordinator;
    const started = Date.now();
    const result = await cancel;
    expect(result.exitCode, `${String(result.stdout)}\n${String(result.stderr)}`).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000); // (the hand-over time is 30 s)
    expect(readRecord(repo, 'hand')!.batch_state).toBe('cancelled');
    expect(requests(repo, 'hand')).toEqual([]);
    writeFileSync(gate, '');
    expect((await lanesProcess(['-C', repo, 'status', 'hand'])).exitCode).toBe(0);
  }, 90_000);

  it('drop: the child is integrated before the coordinator takes the request; drop says it was refused and why (exit 2)', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'late',
      executor: 'script',
      children: [fileChild('A'), fileChild('B', [], waitForGate(gate))],
    });
    // The coordinator stops itself right after A's integration moved the batch branch, before
    // the record says so: a drop checked now finds A not yet integrated and is handed over.
    const coordinator = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless'], {
      LANES_STOP_AT: 'after-update-ref@A',
    });
    const stopped = () =>
      readFileSync(`/proc/${coordinator.pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T');
    await until(() => stopped(), 'the coordinator to stop after moving the batch branch', {
      timeoutMs: 60_000,
    });
    const drop = spawnLanes(ctx, ['-C', repo, 'drop', 'late', 'A']);
    await until(() => requests(repo, 'late').length > 0, 'the drop request to be left');
    process.kill(coordinator.pid!, 'SIGCONT');
    const result = await drop;
    expect(result.exitCode, `${String(result.stdout)}\n${String(result.stderr)}`).toBe(2);
    expect(String(result.stderr)).toMatch(/refused: child A is (integrated|released)/);
    expect(requests(repo, 'late')).toEqual([]);
    writeFileSync(gate, '');
    expect((await coordinator).exitCode).toBe(0);
  }, 90_000);
});
