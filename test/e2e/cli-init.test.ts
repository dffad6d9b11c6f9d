import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli, snapshotTree } from '../helpers/repo.js';

// `lanes init` through the bundle: the plan it writes passes `lanes plan check`, --config
// writes a config lanes reads, and a file already there is never overwritten.

describe('lanes init', () => {
  it('writes a starter plan that lanes plan check accepts, and a config with --config', async () => {
    const repo = await makeRepo();
    const r = await runCli(['-C', repo, 'init', '--config']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('wrote plan.yaml and lanes.config.json');
    const check = await runCli(['-C', repo, 'plan', 'check', 'plan.yaml']);
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stdout).toContain('wave 1: hello (script)');
    expect(check.stdout).toContain('wave 2: shout (claude)');
    const config = JSON.parse(readFileSync(join(repo, 'lanes.config.json'), 'utf8')) as {
      executors: Record<string, { argv: string[] }>;
    };
    expect(config.executors.claude!.argv[0]).toBe('claude');
  });

  it('refuses to overwrite: exit 2, nothing written', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, 'lanes.config.json'), '{}\n');
    const before = snapshotTree(repo);
    const r = await runCli(['-C', repo, 'init', 'mine.yaml', '--config']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('lanes.config.json already there (nothing written');
    expect(snapshotTree(repo)).toEqual(before); // (not even mine.yaml)
    writeFileSync(join(repo, 'mine.yaml'), 'batch: x\n');
    const again = await runCli(['-C', repo, 'init', 'mine.yaml']);
    expect(again.exitCode).toBe(2);
    expect(readFileSync(join(repo, 'mine.yaml'), 'utf8')).toBe('batch: x\n');
    const json = await runCli(['-C', repo, 'init', 'plan.json']);
    expect(json.exitCode).toBe(2);
    expect(json.stderr).toContain('name it .yaml or .yml');
  });
});
