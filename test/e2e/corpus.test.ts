import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { preparedRecord } from '../helpers/records.js';
import type { CliResult } from '../helpers/repo.js';
import { makeRepo, runCli, snapshotTree, tempDir } from '../helpers/repo.js';
import { lanesInProcess } from './reliability/support.js';

// The bad-input corpora: every plan in test/corpus/plans must be refused by `plan check`,
// every record in test/corpus/records by `status`, each with exit 2, a message holding its
// .expect line, nothing on stdout, and not one byte written to the repository.
//
// Spawning node costs ~0.5 s a run here, so the corpus runs the CLI in-process through
// `run` with the same error handling as src/cli/main.ts; a few files are also run as real
// processes (the built CLI) to check the two agree.

const CORPUS = join(import.meta.dirname, '..', 'corpus');
const PLANS = join(CORPUS, 'plans');
const RECORDS = join(CORPUS, 'records');
const BATCH = 'b1';

function corpusFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => !name.endsWith('.expect'))
    .sort();
}

const stem = (name: string) => name.slice(0, name.length - extname(name).length);

function expected(dir: string, name: string): string {
  return readFileSync(join(dir, `${stem(name)}.expect`), 'utf8').replace(/\n$/, '');
}

/** execa (runCli) drops the last newline of each stream; so does this, for comparing. */
const chomp = (r: CliResult): CliResult => ({
  ...r,
  stdout: r.stdout.replace(/\n$/, ''),
  stderr: r.stderr.replace(/\n$/, ''),
});

const lanes = (args: string[]): Promise<CliResult> => lanesInProcess(args);

// makeRepo runs git six times; one repository is made and each test gets its own copy.
let template: string;
beforeAll(async () => {
  template = await makeRepo();
});

function freshRepo(): string {
  const repo = join(tempDir(), 'repo');
  cpSync(template, repo, { recursive: true });
  return repo;
}

const plans = corpusFiles(PLANS);
const records = corpusFiles(RECORDS);

describe('corpus layout', () => {
  it('has at least 30 plans and 15 records', () => {
    expect(plans.length).toBeGreaterThanOrEqual(30);
    expect(records.length).toBeGreaterThanOrEqual(15);
  });

  it('has one .expect line per corpus file, and no .expect without its file', () => {
    for (const [dir, files] of [
      [PLANS, plans],
      [RECORDS, records],
    ] as const) {
      for (const name of files) {
        const expect_ = join(dir, `${stem(name)}.expect`);
        expect(existsSync(expect_), `${name} has no .expect`).toBe(true);
        const text = readFileSync(expect_, 'utf8');
        expect(text, `${name}.expect holds one non-empty line`).toMatch(/^[^\n]+\n?$/);
      }
      const stems = new Set(files.map(stem));
      for (const name of readdirSync(dir).filter((n) => n.endsWith('.expect')))
        expect(stems.has(stem(name)), `${name} has no corpus file`).toBe(true);
    }
  });

  it('names files NN-description with the extensions the corpus needs', () => {
    for (const name of [...plans, ...records]) expect(name).toMatch(/^\d\d-[a-z0-9-]+\.[a-z]+$/);
    const exts = new Set(plans.map((p) => extname(p)));
    for (const ext of ['.yaml', '.yml', '.json', '.txt']) expect(exts.has(ext), ext).toBe(true);
    for (const name of records) expect(extname(name)).toBe('.json');
  });
});

describe('invalid plans: plan check exits 2 and writes nothing', () => {
  it.each(plans)('%s', async (name) => {
    const repo = freshRepo();
    const gitBefore = snapshotTree(join(repo, '.git'));
    const plansBefore = snapshotTree(PLANS);

    const result = await lanes(['-C', repo, 'plan', 'check', join(PLANS, name)]);

    expect(result.stderr).toContain(expected(PLANS, name));
    expect(result.stdout).toBe('');
    expect(result.exitCode).toBe(2);
    expect(snapshotTree(join(repo, '.git'))).toEqual(gitBefore);
    expect(snapshotTree(PLANS)).toEqual(plansBefore);
  });
});

/** A repository whose state dir holds `text` as the record of batch b1. */
function repoWithRecord(text: string): string {
  const repo = freshRepo();
  const batches = join(repo, '.git', 'lanes', 'batches');
  mkdirSync(batches, { recursive: true });
  writeFileSync(join(batches, `${BATCH}.json`), text);
  return repo;
}

describe('invalid records: status exits 2 and writes nothing', () => {
  it.each(records)('%s', async (name) => {
    const repo = repoWithRecord(readFileSync(join(RECORDS, name), 'utf8'));
    const before = snapshotTree(join(repo, '.git'));
    const fragment = expected(RECORDS, name);

    for (const args of [
      ['status', BATCH],
      ['status', '--json'],
    ]) {
      const result = await lanes(['-C', repo, ...args]);
      expect(result.stderr, args.join(' ')).toContain(fragment);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(snapshotTree(join(repo, '.git')), args.join(' ')).toEqual(before);
    }
  });
});

describe('the harness', () => {
  it('accepts what is sound: a valid plan and a valid record exit 0', async () => {
    // Guards against a harness that fails everything (then the corpus would prove nothing).
    const repo = repoWithRecord(`${JSON.stringify(preparedRecord(BATCH), null, 2)}\n`);
    const planPath = join(repo, 'plan.yaml');
    writeFileSync(
      planPath,
      'batch: ok\nchildren:\n  - id: T1\n    goal: g\n    scope: [src]\n    acceptance: [{ id: A1, run: ["true"] }]\n',
    );
    const plan = await lanes(['-C', repo, 'plan', 'check', planPath]);
    expect(plan).toMatchObject({ exitCode: 0, stderr: '' });
    const status = await lanes(['-C', repo, 'status', '--json']);
    expect(status).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(status.stdout).record.batch_id).toBe(BATCH);
  });

  it('gives what the built CLI gives, for a sample of the corpus', async () => {
    const repo = freshRepo();
    for (const name of [plans[0], plans[plans.length - 1], ...plans.filter((p) => p.includes('cycle'))]) {
      const args = ['-C', repo, 'plan', 'check', join(PLANS, name as string)];
      expect(chomp(await lanes(args)), name).toEqual(await runCli(args));
    }
    for (const name of [records[0], records[records.length - 1]]) {
      const withRecord = repoWithRecord(readFileSync(join(RECORDS, name as string), 'utf8'));
      const args = ['-C', withRecord, 'status', BATCH];
      expect(chomp(await lanes(args)), name).toEqual(await runCli(args));
    }
  });
});
