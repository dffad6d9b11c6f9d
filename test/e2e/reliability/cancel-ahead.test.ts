import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { git } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import {
  events,
  fileChild,
  lanesProcess,
  leanRepo,
  readRecord,
  spawnLanes,
  waitForGate,
  writePlan,
} from './support.js';
import { join } from 'node:path';
import { tempDir } from '../../helpers/repo.js';
import { requestsDir } from '../../../src/store/requests.js';

// `lanes cancel` while a lane is made ahead for the child that takes the next slot
// (docs/RELIABILITY.md, "Adversarial pass", item 13): the cancelled batch must not keep a
// worktree and a branch for a child the record calls pending or dropped without work.

describe('cancel while a lane is made ahead', () => {
  it('leaves no lane of a child that never ran', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'ahead',
      executor: 'script',
      max_parallel: 1,
      children: [fileChild('A', [], waitForGate(gate)), fileChild('B')],
    });
    const run = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => events(repo, 'ahead').includes('lane-made-ahead:B'), 'B made ahead', {
      timeoutMs: 60_000,
    });
    const cancel = await lanesProcess(['-C', repo, 'cancel', 'ahead']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    await run;
    const b = readRecord(repo, 'ahead')!.children.find((c) => c.task_id === 'B')!;
    expect(b.lane).toBeNull();
    expect(existsSync(join(`${repo}.lanes`, 'ahead', 'B'))).toBe(false);
    expect(await git(repo, 'branch', '--list', 'lane/ahead/B')).toBe('');
  }, 90_000);

  it('leaves no lane of a child whose lane was being made when the cancel came', async (ctx) => {
    const repo = await leanRepo();
    const plan = writePlan({
      batch: 'mid',
      executor: 'script',
      max_parallel: 1,
      children: [fileChild('A'), fileChild('B', ['A'])],
    });
    // The coordinator holds itself right after `git worktree add` of B's lane.
    const run = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless'], {
      LANES_STOP_AT: 'after-worktree-add@B',
    });
    const stopped = () => readFileSync(`/proc/${run.pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T');
    await until(() => stopped(), "B's lane to be made", { timeoutMs: 60_000 });
    const cancel = spawnLanes(ctx, ['-C', repo, 'cancel', 'mid']);
    // The request file itself, not its folder: the folder is made first, and a coordinator
    // let go before the file is there finds it only at its next look, after B is done.
    const requests = requestsDir(join(repo, '.git', 'lanes'), 'mid');
    const asked = () => existsSync(requests) && readdirSync(requests).some((n) => n.endsWith('.json'));
    await until(asked, 'the request');
    process.kill(run.pid!, 'SIGCONT');
    expect((await cancel).exitCode).toBe(0);
    await run;
    const record = readRecord(repo, 'mid')!;
    expect(record.batch_state).toBe('cancelled');
    const b = record.children.find((c) => c.task_id === 'B')!;
    const lanePath = join(`${repo}.lanes`, 'mid', 'B');
    // Either the record knows B's lane, or nothing of it is left.
    if (b.lane === null) {
      expect(existsSync(lanePath)).toBe(false);
      expect(await git(repo, 'branch', '--list', 'lane/mid/B')).toBe('');
    }
  }, 90_000);
});
