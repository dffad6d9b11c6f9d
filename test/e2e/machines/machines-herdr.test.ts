import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerdrStub } from '../../helpers/herdr-stub.js';
import type { HerdrStub } from '../../helpers/herdr-stub.js';
import { git } from '../../helpers/repo.js';
import { type SshMachines, startSshMachines } from '../../helpers/sshd.js';
import { integratedTasks, lanesProcess, readRecord, writePlan } from '../reliability/support.js';
import { machineRepo } from './support.js';

// Machines under the Herdr host (the stub herdr on PATH, HERDR_ENV=1): the local lane opens
// as a Herdr tab as without machines, the lanes on machines run in their tmux sessions
// there (the machine host), and the batch completes with every child where placement put
// it. Run `npm run -s build` first.

describe('machines with the Herdr host', () => {
  let fixture: SshMachines;
  let stub: HerdrStub;
  beforeAll(async () => {
    fixture = await startSshMachines(1);
    stub = await startHerdrStub();
  }, 60_000);
  afterAll(async () => {
    await fixture?.close();
  }, 30_000);

  it('a local lane in a Herdr tab and lanes on a machine complete one batch', async () => {
    const [m1] = fixture.machines;
    const repo = await machineRepo(fixture, {
      machines: [
        { name: 'local', slots: 1 },
        { name: m1!.name, ssh: m1!.name, slots: 2 },
      ],
    });
    const children = ['h1', 'h2', 'h3'];
    const plan = writePlan({
      batch: 'hm',
      executor: 'script',
      max_parallel: 3,
      children: children.map((id) => ({
        id,
        goal: `write who ran ${id}`,
        scope: [`who/${id}.txt`],
        acceptance: [{ id: 'written', run: ['test', '-s', `who/${id}.txt`] }],
        run: `mkdir -p who && id -un > who/${id}.txt`,
        ...(id === 'h1' ? { machine: 'local' } : { machine: m1!.name }),
      })),
    });
    const r = await lanesProcess(
      ['-C', repo, 'start', plan, '--yes', '--headless', '--host', 'herdr'],
      stub.env,
    );
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(readRecord(repo, 'hm')!.batch_state).toBe('completed');
    expect((await integratedTasks(repo, 'main..batch/hm')).sort()).toEqual(children);
    expect((await git(repo, 'show', 'batch/hm:who/h1.txt')).trim()).toBe('root');
    for (const id of ['h2', 'h3'])
      expect((await git(repo, 'show', `batch/hm:who/${id}.txt`)).trim()).toBe(m1!.user);
    // The local lane had its Herdr tab; the machine's lanes none (they ran in tmux there).
    const tabs = stub
      .requests()
      .filter((q) => q.method === 'tab.create')
      .map((q) => q.params?.label);
    expect(tabs).toEqual(['h1']);
    const spawned = readFileSync(join(repo, '.git', 'lanes', 'batches', 'hm.events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { event: string; task?: string; host?: string })
      .filter((e) => e.event === 'executor-spawned');
    expect(Object.fromEntries(spawned.map((e) => [e.task, e.host]))).toEqual({
      h1: 'herdr',
      h2: 'machine',
      h3: 'machine',
    });
  }, 180_000);
});
