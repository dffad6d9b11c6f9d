import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { until } from '../../helpers/until.js';
import { fileChild, lanesProcess, leanRepo, readRecord, writePlan } from './support.js';

// An executor that leaves a daemon behind (docs/RELIABILITY.md, "Adversarial pass"): a
// `setsid` child of its own session that keeps the executor's stdout open. The executor's
// own exit is the exit (lanes does not wait for the daemon to close its output), and what
// it left running is stopped with its lane.

function pidsWith(marker: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

describe('an executor that leaves a setsid daemon', () => {
  it.each(['headless', 'pty'])(
    'on the %s host: its exit is seen at once, and the daemon goes with its lane',
    async (host) => {
      const repo = await leanRepo();
      const marker = `lanes-daemon-${host}-${process.pid}-${Date.now()}`;
      const plan = writePlan({
        batch: 'daemon',
        executor: 'script',
        children: [fileChild('A', [], `setsid sh -c 'sleep 45 # ${marker}' & `)],
      });
      const started = Date.now();
      const result = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless', '--host', host]);
      expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(Date.now() - started).toBeLessThan(30_000); // (the daemon lives 45 s)
      expect(readRecord(repo, 'daemon')!.children[0]!.state).toBe('released');
      await until(() => pidsWith(marker).length === 0, 'the daemon to be stopped with its lane', {
        timeoutMs: 5_000,
      });
    },
    90_000,
  );
});
