import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { snapshotTree } from '../../helpers/repo.js';
import { copyRepo, lanesInProcess, leanRepo } from './support.js';

// Broken files (docs/RELIABILITY.md): every config in test/corpus/configs, every plan in
// test/corpus/plans and every record in test/corpus/records goes through each command that
// reads it. Each must exit 2 with a message holding its .expect line, print nothing on
// stdout, and leave the repository's .git (the state dir with it) byte for byte as it was.
// (`plan check` of the plans and `status` of the records: test/corpus.test.ts.)

const CORPUS = join(import.meta.dirname, '..', '..', 'corpus');
const stem = (name: string) => name.slice(0, name.length - extname(name).length);
const files = (dir: string) =>
  readdirSync(join(CORPUS, dir))
    .filter((n) => !n.endsWith('.expect'))
    .sort();
const expected = (dir: string, name: string) =>
  readFileSync(join(CORPUS, dir, `${stem(name)}.expect`), 'utf8').replace(/\n$/, '');

const VALID_PLAN = `batch: b1
children:
  - { id: T1, goal: g, scope: [src], acceptance: [{ id: A1, run: ["true"] }] }
`;

let template: string;
let validPlan: string;
beforeAll(async () => {
  template = await leanRepo();
  validPlan = join(template, '..', 'valid.yaml');
  writeFileSync(validPlan, VALID_PLAN);
});

/** Runs each command in `repo` and checks: exit 2, the fragment on stderr, no stdout, no write. */
async function refusedWithoutWrites(
  repo: string,
  commands: string[][],
  fragment: string,
  ...alternatives: string[]
): Promise<void> {
  const before = snapshotTree(join(repo, '.git'));
  for (const args of commands) {
    const r = await lanesInProcess(['-C', repo, ...args]);
    const what = args.join(' ');
    const said = [fragment, ...alternatives].filter((f) => r.stderr.includes(f));
    expect(said, `${what}: ${r.stderr}`).not.toEqual([]);
    expect(r.stdout, what).toBe('');
    expect(r.exitCode, what).toBe(2);
    expect(snapshotTree(join(repo, '.git')), what).toEqual(before);
  }
}

describe('a broken lanes.config.json: exit 2, nothing written', () => {
  const configs = files('configs');
  it('has the corpus', () => expect(configs.length).toBeGreaterThanOrEqual(25));
  it.each(configs)('%s', async (name) => {
    const repo = copyRepo(template);
    writeFileSync(join(repo, 'lanes.config.json'), readFileSync(join(CORPUS, 'configs', name)));
    await refusedWithoutWrites(
      repo,
      [
        ['plan', 'check', validPlan],
        ['start', validPlan, '--yes', '--no-run', '--headless'],
      ],
      expected('configs', name),
    );
  });
});

describe('a broken plan: start and resume --replan exit 2, nothing written', () => {
  let withBatch: string;
  beforeAll(async () => {
    // A batch to re-plan: confirmed, not run.
    withBatch = copyRepo(template);
    const r = await lanesInProcess(['-C', withBatch, 'start', validPlan, '--yes', '--no-run', '--headless']);
    expect(r.exitCode, r.stderr).toBe(0);
  });
  it.each(files('plans'))('%s', async (name) => {
    const plan = join(CORPUS, 'plans', name);
    await refusedWithoutWrites(
      copyRepo(template),
      [['start', plan, '--yes', '--no-run', '--headless']],
      expected('plans', name),
    );
    await refusedWithoutWrites(
      copyRepo(withBatch),
      [['resume', 'b1', '--headless', '--approve', '--replan', plan]],
      expected('plans', name),
      // (a plan that parses but is for another batch is refused for that first)
      '--replan: the plan is for batch "auth-rework", not "b1"',
    );
  });
});

describe('a broken batch record: every command that reads it exits 2, nothing written', () => {
  it.each(files('records'))('%s', async (name) => {
    const repo = copyRepo(template);
    const batches = join(repo, '.git', 'lanes', 'batches');
    mkdirSync(batches, { recursive: true });
    writeFileSync(join(batches, 'b1.json'), readFileSync(join(CORPUS, 'records', name)));
    await refusedWithoutWrites(
      repo,
      [
        ['resume', 'b1', '--headless'],
        ['resume', 'b1', '--headless', '--approve'],
        ['tick', 'b1', '--json'],
        ['wait', 'b1', '--until', 'completed', '--timeout', '1'],
        ['log', 'b1', '--json'],
        ['start', validPlan, '--yes', '--no-run', '--headless'],
      ],
      expected('records', name),
    );
    expect(existsSync(join(repo, '.git', 'lanes', 'locks'))).toBe(false);
  });
});
