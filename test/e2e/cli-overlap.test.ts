import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers/repo.js';
import { readRecord } from '../helpers/ways-out.js';

// A second batch whose scopes may overlap those of a batch still under way in the same
// repository is refused at confirmation (issue 26), naming the other batch and the globs;
// --yes does not skip it, --allow-overlap allows it on purpose.

const plan = (batch: string, scope: string, review = false) => `batch: ${batch}
executor: script
children:
  - id: one
    goal: Writes a file
    scope: ["${scope}"]
    acceptance: [{ id: ok, run: "true" }]
${review ? '    review: human\n' : ''}    run: "mkdir -p src docs; echo x > ${scope.replace('**', 'x.txt')}"
`;

describe('overlapping batches', () => {
  it('are refused at confirmation unless --allow-overlap; disjoint ones start', async () => {
    const repo = await makeRepo();
    const dir = join(repo, '..');
    writeFileSync(join(dir, 'first.yaml'), plan('first', 'src/**', true));
    writeFileSync(join(dir, 'second.yaml'), plan('second', 'src/a.txt'));
    writeFileSync(join(dir, 'third.yaml'), plan('third', 'docs/d.txt'));
    // `first` waits for a review: still running when the others start.
    await runCli(['-C', repo, 'start', '../first.yaml', '--yes', '--headless']);
    expect(readRecord(repo, 'first')!.batch_state).toBe('running');

    const refused = await runCli(['-C', repo, 'start', '../second.yaml', '--yes', '--headless']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('batch "first"');
    expect(refused.stderr).toContain('src/a.txt');
    expect(refused.stderr).toContain('src/**');
    expect(refused.stderr).toContain('--allow-overlap');
    expect(readRecord(repo, 'second')).toBeNull();

    const disjoint = await runCli(['-C', repo, 'start', '../third.yaml', '--yes', '--headless']);
    expect(disjoint.exitCode, disjoint.stderr).toBe(0);

    const allowed = await runCli([
      '-C',
      repo,
      'start',
      '../second.yaml',
      '--yes',
      '--headless',
      '--allow-overlap',
    ]);
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(readRecord(repo, 'second')!.batch_state).toBe('completed');
  });
});
