import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, makeRepo, runCli } from '../helpers/repo.js';
import { stateDir } from '../helpers/ways-out.js';

// The smaller list of issue 26, each from the user's side: the CLI's exit code and output.

const plan = (batch: string, run = 'echo one > one.txt', extra = '') => `batch: ${batch}
executor: script
children:
  - id: one
    goal: Writes one file
    scope: ["one.txt"]
    acceptance: [{ id: ok, run: "test -f one.txt" }]
    run: "${run}"
${extra}`;

async function completedBatch(batch = 'small', run?: string) {
  const repo = await makeRepo();
  writeFileSync(join(repo, '..', `${batch}.yaml`), plan(batch, run));
  const r = await runCli(['-C', repo, 'start', `../${batch}.yaml`, '--yes', '--headless']);
  expect(r.exitCode, r.stderr).toBe(0);
  return { repo, r };
}

describe('the smaller list', () => {
  it('says each release and each batch line once; plurals agree', async () => {
    const { r } = await completedBatch();
    const lines = r.stderr.split('\n').map((l) => l.replace(/^\[[\s\d.]+s\] /, ''));
    expect(lines.filter((l) => /^one: (lane )?released$/.test(l))).toEqual(['one: released']);
    const batchLines = lines.filter((l) => l.startsWith('small: '));
    expect(new Set(batchLines).size).toBe(batchLines.length);
    expect(r.stderr).toContain('batch small: 1 child in 1 wave from HEAD');
  });

  it('lanes log | head -1 ends quietly with exit 0', async () => {
    const { repo } = await completedBatch('piped', 'seq 1 200000; echo one > one.txt');
    const r = await execa(
      'sh',
      [
        '-c',
        `"${process.execPath}" "${CLI}" -C "${repo}" log --task one | head -1; exit "\${PIPESTATUS:-0}"`,
      ],
      {
        reject: false,
        env: { NO_COLOR: '1' },
      },
    );
    expect(r.stderr).toBe('');
    const code = await execa(
      'bash',
      [
        '-c',
        `"${process.execPath}" "${CLI}" -C "${repo}" log --task one | head -1 >/dev/null; echo \${PIPESTATUS[0]}`,
      ],
      {
        env: { NO_COLOR: '1' },
      },
    );
    expect(code.stdout.trim()).toBe('0');
  });

  it('land, clean, log and wait default to the one batch; clean leaves no empty folders', async () => {
    const { repo } = await completedBatch('one-batch');
    const waited = await runCli(['-C', repo, 'wait', '--until', 'completed']);
    expect(waited.exitCode, waited.stderr).toBe(0);
    const log = await runCli(['-C', repo, 'log']);
    expect(log.exitCode, log.stderr).toBe(0);
    const land = await runCli(['-C', repo, 'land']);
    expect(land.exitCode, land.stderr).toBe(0);
    const clean = await runCli(['-C', repo, 'clean']);
    expect(clean.exitCode, clean.stderr).toBe(0);
    expect(existsSync(join(`${repo}.lanes`, 'one-batch'))).toBe(false);
    expect(existsSync(join(stateDir(repo), 'trash', 'one-batch'))).toBe(false);
  });

  it('with two batches, log names them and says how to pick', async () => {
    const { repo } = await completedBatch('first');
    writeFileSync(join(repo, '..', 'second.yaml'), plan('second', 'echo two > one.txt'));
    const second = await runCli(['-C', repo, 'start', '../second.yaml', '--yes', '--headless']);
    expect(second.exitCode, second.stderr).toBe(0);
    const log = await runCli(['-C', repo, 'log']);
    expect(log.exitCode).toBe(2);
    expect(log.stderr).toMatch(/first, second/);
    expect(log.stderr).toMatch(/lanes log <batch>/);
  });

  it('wait --timeout exits 5, an exit code of its own', async () => {
    const repo = await makeRepo();
    writeFileSync(
      join(repo, '..', 'rev.yaml'),
      plan('rev', 'echo one > one.txt').replace('    run:', '    review: human\n    run:'),
    );
    await runCli(['-C', repo, 'start', '../rev.yaml', '--yes', '--headless']);
    const r = await runCli(['-C', repo, 'wait', 'rev', '--until', 'completed', '--timeout', '1']);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain('still running after 1 s');
  });

  it.each([
    'plan',
    'start',
    'resume',
    'drop',
    'cancel',
    'tick',
    'status',
    'log',
    'wait',
    'demo',
    'land',
    'clean',
  ])('lanes %s --help prints its usage and exits 0', async (command) => {
    const r = await runCli(command === 'plan' ? ['plan', 'check', '--help'] : [command, '--help']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`lanes ${command === 'plan' ? 'plan check' : command}`);
  });

  it('start says which uncommitted changes it leaves out', async () => {
    const repo = await makeRepo({ 'README.md': '# x\n', 'notes.txt': 'a\n' });
    writeFileSync(join(repo, 'notes.txt'), 'changed\n');
    writeFileSync(join(repo, 'new.txt'), 'new\n');
    writeFileSync(join(repo, '..', 'p.yaml'), plan('dirty'));
    const r = await runCli(['-C', repo, 'start', '../p.yaml', '--yes', '--headless']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 uncommitted changes .*not in the batch.*notes\.txt, new\.txt/);
  });

  it('plan check reports an unknown dependency together with the schema errors', async () => {
    const repo = await makeRepo();
    const file = join(repo, '..', 'bad.yaml');
    writeFileSync(
      file,
      `batch: bad\nchildren:\n  - id: a\n    scope: ["a"]\n    acceptance: [{ id: ok, run: "true" }]\n    blocked_by: [ghost]\n`,
    );
    const r = await runCli(['plan', 'check', file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('goal');
    expect(r.stderr).toContain('ghost');
    expect(readdirSync(join(repo, '..'))).toContain('bad.yaml');
  });
});
