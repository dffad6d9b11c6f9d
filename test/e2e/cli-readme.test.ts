import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, makeRepo, runCli } from '../helpers/repo.js';
import { readRecord } from '../helpers/ways-out.js';

// README's "Writing a plan" (issue 26): its script example runs as it stands, its agent
// example is a valid plan, every field of the plan's schema has its line, and
// `review: human` is explained.

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function section(): string {
  const start = README.indexOf('## Writing a plan\n');
  expect(start).toBeGreaterThan(-1);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end === -1 ? undefined : end);
}

function yamlBlocks(text: string): string[] {
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The keys of a `z.strictObject({ … })` in the plan's schema, by the name of its const. */
function schemaKeys(name: string): string[] {
  const source = readFileSync(join(ROOT, 'src', 'core', 'plan', 'plan.ts'), 'utf8');
  const body = source.slice(source.indexOf(`const ${name} = z.strictObject({`));
  const block = body.slice(0, body.indexOf('\n});'));
  return [...block.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1]!);
}

describe('README: writing a plan', () => {
  it('runs its script example as it stands', async () => {
    const [script] = yamlBlocks(section());
    expect(script).toContain('executor: script');
    const repo = await makeRepo();
    writeFileSync(join(repo, '..', 'greet.yaml'), script!);
    const r = await runCli(['-C', repo, 'start', '../greet.yaml', '--yes', '--headless']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readRecord(repo, 'greet')!.batch_state).toBe('completed');
    expect(await git(repo, 'show', 'batch/greet:HELLO.txt')).toBe('HELLO');
  });

  it('has an agent example that is a valid plan', async () => {
    const agent = yamlBlocks(section()).find((b) => /executor: (claude|codex)/.test(b));
    expect(agent).toBeDefined();
    const repo = await makeRepo();
    const file = join(repo, '..', 'agent.yaml');
    writeFileSync(file, agent!);
    const r = await runCli(['plan', 'check', file]);
    expect(r.exitCode, r.stderr).toBe(0);
  });

  it('gives every field of the plan a line, and explains review: human', () => {
    const text = section();
    const table = text.split('\n').filter((l) => l.startsWith('| `'));
    const named = table.map((l) => l.split('|')[1]!).join(' ');
    for (const key of schemaKeys('planSchema').filter((k) => k !== 'children' && k !== 'budget'))
      expect(named, key).toMatch(new RegExp(`\`${key}\``));
    for (const key of ['max_children', 'qa_failure_limit']) expect(named).toContain(`budget.${key}`);
    for (const key of schemaKeys('childSchema'))
      expect(named, key).toMatch(new RegExp(`children\\[\\]\\.${key}\\b|\\.${key}\``));
    expect(text).toContain('`review: human`');
    expect(text).toMatch(/--review <child>=approve/);
    expect(text).toContain('docs/DESIGN.md#21-the-plan');
  });
});
