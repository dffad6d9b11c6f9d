import { execFileSync, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// `npm run test:unit` promises tests that start no process: its setup
// (test/helpers/no-processes.ts) refuses every way to start one. This file is a unit test,
// so it runs under that setup and checks the refusal is there.

describe('a unit test', () => {
  it('cannot start a process', () => {
    expect(() => execFileSync('git', ['--version'])).toThrow(/a unit test starts no process/);
    expect(() => spawn('sh', ['-c', 'true'])).toThrow(/a unit test starts no process/);
  });
});
