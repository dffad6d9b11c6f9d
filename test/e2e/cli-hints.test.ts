import { mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, makeRepo, runCli, tempDir } from '../helpers/repo.js';
import { readRecord } from '../helpers/ways-out.js';

// Every command lanes prints runs as printed from the user's shell (issue 26): `lanes …`
// when the shell finds this lanes on PATH, else the form that works (`node <bundle> …`).

const PLAN = `batch: hints
budget: { qa_failure_limit: 1 }
executor: script
children:
  - id: red
    goal: A check that fails
    scope: ["red.txt"]
    acceptance: [{ id: redcheck, run: "false" }]
    run: "echo red > red.txt"
`;

async function parkedRun(env: Record<string, string>) {
  const repo = await makeRepo();
  writeFileSync(join(repo, '..', 'plan.yaml'), PLAN);
  // (from the repository itself: the hints need no -C)
  const r = await runCli(['start', '../plan.yaml', '--yes', '--headless'], { env, cwd: repo });
  expect(r.exitCode, r.stderr).toBe(3);
  return r;
}

describe('printed commands', () => {
  it('without lanes on PATH name the bundle through node', async () => {
    const r = await parkedRun({ PATH: process.env.PATH ?? '' });
    expect(r.stdout).toContain(`(node ${CLI} resume hints --approve, or r in the TUI)`);
    expect(r.stdout).toContain(`end the batch: node ${CLI} cancel hints.`);
    expect(r.stdout).not.toMatch(/[^/]lanes (resume|drop|cancel) /);
  });

  it('with this lanes on PATH say lanes', async () => {
    const bin = join(tempDir(), 'bin');
    mkdirSync(bin);
    symlinkSync(CLI, join(bin, 'lanes'));
    const r = await parkedRun({ PATH: `${bin}:${process.env.PATH ?? ''}` });
    expect(r.stdout).toContain('(lanes resume hints --approve, or r in the TUI)');
    expect(r.stdout).toContain('(lanes drop hints red)');
  });

  it('from another folder (-C) name the folder, and run as printed', async () => {
    const repo = await makeRepo();
    const elsewhere = tempDir();
    writeFileSync(join(repo, '..', 'plan.yaml'), PLAN);
    const r = await runCli(['-C', repo, 'start', '../plan.yaml', '--yes', '--headless'], { cwd: elsewhere });
    expect(r.exitCode, r.stderr).toBe(3);
    const drop = /\(([^()]*drop hints red)\)/.exec(r.stdout)?.[1];
    expect(drop).toBe(`node ${CLI} -C ${repo} drop hints red`);
    const ran = await execa('sh', ['-c', drop!], { cwd: elsewhere, reject: false, env: { NO_COLOR: '1' } });
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(readRecord(repo, 'hints')!.children[0]!.state).toBe('dropped');
  });

  it('the build leaves the bin executable (a global install links to it)', () => {
    expect(statSync(CLI).mode & 0o111).toBe(0o111);
  });
});
