import { describe, expect, it } from 'vitest';
import { LaneJobs } from '../../src/coordinator/lanes/lane-jobs.js';

// The steward's queue (src/coordinator/lane-jobs.ts): a child's jobs one at a time and in
// order, different children's side by side, a key at most once while it is out, errors
// handed on, and `idle` once everything queued has run.

function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => {};
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('lane jobs', () => {
  it("runs a child's jobs one at a time, in order, and a key once while it is queued or running", async () => {
    const errors: unknown[] = [];
    const jobs = new LaneJobs((_key, error) => errors.push(error));
    const log: string[] = [];
    const first = gate();
    expect(
      jobs.push('provision:a', async () => {
        log.push('a start');
        await first.wait;
        log.push('a end');
      }),
    ).toBe(true);
    expect(jobs.push('release:a', async () => void log.push('a released'))).toBe(true);
    // (the same child again while its job is out: not queued twice)
    expect(jobs.push('provision:a', async () => void log.push('a again'))).toBe(false);
    expect(jobs.has('provision:a')).toBe(true);
    expect(jobs.keysWith('release:')).toEqual(['a']);
    expect(jobs.busy).toBe(true);
    await Promise.resolve();
    expect(log).toEqual(['a start']); // the release waits for the provision
    first.open();
    await jobs.idle();
    expect(log).toEqual(['a start', 'a end', 'a released']);
    expect(jobs.busy).toBe(false);
    expect(jobs.keysWith('release:')).toEqual([]);
    // Once a's job is over, a new one for a is taken.
    expect(jobs.push('provision:a', async () => void log.push('a again'))).toBe(true);
    await jobs.idle();
    expect(log.at(-1)).toBe('a again');
    expect(errors).toEqual([]);
  });

  it("runs different children's jobs side by side, and says when one child's are done", async () => {
    const jobs = new LaneJobs(() => {});
    const log: string[] = [];
    const a = gate();
    jobs.push('provision:a', async () => {
      log.push('a start');
      await a.wait;
      log.push('a end');
    });
    jobs.push('provision:b', async () => void log.push('b'));
    let bDone = false;
    let aDone = false;
    void jobs.doneWith('b').then(() => (bDone = true));
    void jobs.doneWith('a').then(() => (aDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    // b did not wait for a
    expect(log).toEqual(['a start', 'b']);
    expect([bDone, aDone]).toEqual([true, false]);
    expect(jobs.busy).toBe(true);
    a.open();
    await jobs.idle();
    expect(aDone).toBe(true);
    expect(log).toEqual(['a start', 'b', 'a end']);
    // (nothing out for a child: at once)
    let now = false;
    void jobs.doneWith('c').then(() => (now = true));
    await Promise.resolve();
    expect(now).toBe(true);
  });

  it('hands a job that throws to its owner, frees its key and goes on with the next', async () => {
    const errors: [string, unknown][] = [];
    const jobs = new LaneJobs((key, error) => errors.push([key, error]));
    const ran: string[] = [];
    jobs.push('provision:a', async () => {
      throw new Error('worktree add failed');
    });
    jobs.push('release:a', async () => void ran.push('a'));
    jobs.push('provision:b', async () => void ran.push('b'));
    await jobs.idle();
    expect(errors.map(([key, error]) => [key, (error as Error).message])).toEqual([
      ['provision:a', 'worktree add failed'],
    ]);
    expect(ran.sort()).toEqual(['a', 'b']);
    expect(jobs.has('provision:a')).toBe(false);
  });

  it('is idle at once with nothing queued', async () => {
    const jobs = new LaneJobs(() => {});
    let idle = false;
    void jobs.idle().then(() => (idle = true));
    await Promise.resolve();
    expect(idle).toBe(true);
  });

  it('says when the queue has run dry, once for each time it does', async () => {
    let dry = 0;
    const jobs = new LaneJobs(
      () => {},
      () => dry++,
    );
    const first = gate();
    jobs.push('provision:a', () => first.wait);
    jobs.push('release:b', async () => {});
    expect(dry).toBe(0);
    first.open();
    await jobs.idle();
    expect(dry).toBe(1);
    jobs.push('release:c', async () => {});
    await jobs.idle();
    expect(dry).toBe(2);
  });
});
