import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePlanText } from '../../src/core/plan/plan.js';
import { runBatch } from '../../src/cli/batch-run/run-batch.js';
import { createBatch, preflight } from '../../src/cli/start/confirm.js';
import type { Host } from '../../src/hosts/host.js';
import { HOSTS } from '../../src/hosts/hosts.js';
import { findRepo } from '../../src/store/state-dir.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';
import { ledgerHost } from './ledger-host.js';
import type { LedgerLine } from './ledger-host.js';

// The host registry: `--host` parsed against it, a host chosen by asking each in order, and
// a host made by its entry. A host of the test's own (test/hosts/ledger-host.ts, one file)
// joins with one line and runs a real batch: real git in a temporary repository, real
// processes, the coordinator in this process.

const made: Host[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((h) => h.dispose()));
});
const nobody = { notify: () => {}, cols: 80, rows: 24 };

describe('the host registry', () => {
  it('takes the names it knows for --host and refuses others, naming them (exit 2)', () => {
    expect(HOSTS.names).toEqual(['herdr', 'pty', 'headless']);
    for (const name of HOSTS.names) expect(HOSTS.parse(name)).toBe(name);
    expect(HOSTS.parse(undefined)).toBeUndefined();
    expect(() => HOSTS.parse('tmux')).toThrow(/^--host must be herdr, pty or headless, got "tmux"$/);
    expect(() => HOSTS.parse('ledger')).toThrow(expect.objectContaining({ code: 'usage', exitCode: 2 }));
    const withLedger = HOSTS.with(ledgerHost(join(tempDir(), 'ledger')));
    expect(withLedger.parse('ledger')).toBe('ledger');
    expect(() => withLedger.parse('x')).toThrow(/--host must be ledger, herdr, pty or headless/);
  });

  it('refuses two hosts of one name', () => {
    expect(() => HOSTS.with({ ...ledgerHost('/nowhere'), name: 'pty' })).toThrow('two hosts are named pty');
  });

  it('chooses --host when given, else the first host that says it fits here', () => {
    const told: string[] = [];
    const tell = (line: string) => told.push(line);
    expect(HOSTS.choose('headless', { tuiDrawn: true, env: {} }, tell)).toBe('headless');
    expect(HOSTS.choose(undefined, { tuiDrawn: true, env: {} }, tell)).toBe('pty');
    expect(HOSTS.choose(undefined, { tuiDrawn: false, env: {} }, tell)).toBe('headless');
    expect(told).toEqual([]);
    // A Herdr hint with no Herdr behind it: said, and the next host that fits is taken.
    const hint = { HERDR_ENV: '1', HERDR_BIN_PATH: join(tempDir(), 'no-herdr') };
    expect(HOSTS.choose(undefined, { tuiDrawn: false, env: hint }, tell)).toBe('headless');
    expect(told).toEqual([
      expect.stringMatching(/^HERDR_ENV=1 but Herdr cannot be driven \(.+\); using the headless host$/),
    ]);
    const withLedger = HOSTS.with(ledgerHost(join(tempDir(), 'ledger')));
    expect(withLedger.choose(undefined, { tuiDrawn: true, env: { LANES_LEDGER_HOST: '1' } }, tell)).toBe(
      'ledger',
    );
    expect(withLedger.choose(undefined, { tuiDrawn: true, env: {} }, tell)).toBe('pty');
  });

  it('makes hosts that declare what they can do (only one that outlives lanes can reattach)', async () => {
    const registry = HOSTS.with(ledgerHost(join(tempDir(), 'ledger')));
    for (const name of ['pty', 'headless', 'ledger']) {
      const host = await registry.create(name, nobody);
      made.push(host);
      expect(host.name).toBe(name);
      expect(typeof host.reattach === 'function').toBe(host.capabilities.outlivesLanes);
    }
    expect(made.map((h) => [h.name, h.capabilities])).toEqual([
      ['pty', { inAppPane: true, outlivesLanes: false, attachable: false, agents: 'interactive' }],
      ['headless', { inAppPane: false, outlivesLanes: false, attachable: false, agents: 'headless' }],
      ['ledger', { inAppPane: false, outlivesLanes: false, attachable: false, agents: 'headless' }],
    ]);
  });

  it('refuses a host that says it outlives lanes but cannot reattach', async () => {
    const entry = ledgerHost(join(tempDir(), 'ledger'));
    const boastful = {
      ...entry,
      name: 'boastful',
      create: async () => {
        const host = await entry.create(nobody);
        made.push(host);
        return Object.assign(Object.create(host) as Host, {
          capabilities: { ...host.capabilities, outlivesLanes: true },
        });
      },
    };
    await expect(HOSTS.with(boastful).create('boastful', nobody)).rejects.toThrow(
      'the boastful host says its executors outlive lanes but has no reattach',
    );
  });
});

describe('a host added in one file and one registry line', () => {
  it('runs a real batch: every executor through it, every child integrated', async () => {
    const repo = await makeRepo();
    const ledger = join(tempDir('lanes-ledger-'), 'ledger.jsonl');
    const hosts = HOSTS.with(ledgerHost(ledger)); // the one registry line
    const child = (id: string, blockedBy: string[]) => `
  - id: ${id}
    goal: Write ${id}
    blocked_by: [${blockedBy.join(', ')}]
    scope: ["${id}.txt"]
    acceptance: [{ id: has-${id}, run: "test -f ${id}.txt" }]
    run: "echo ${id} from pid $$ > ${id}.txt"`;
    const planText = `batch: ledger1\nmax_parallel: 2\nexecutor: script\nchildren:${child('a', [])}${child('b', [])}${child('c', ['a'])}\n`;
    const plan = parsePlanText(planText, 'plan.yaml', YAML);
    const paths = await findRepo(repo);
    await createBatch(paths, plan, await preflight(paths, plan, {}), new Date());

    const out: string[] = [];
    const host = hosts.choose(undefined, { tuiDrawn: false, env: { LANES_LEDGER_HOST: '1' } }, (l) =>
      out.push(l),
    );
    const code = await runBatch(
      { cwd: repo, stdout: (t) => out.push(t), stderr: (t) => out.push(t) },
      { repo: paths, batchId: 'ledger1', host, hosts, command: 'start' },
    );

    expect(code, out.join('')).toBe(0);
    const lines = readFileSync(ledger, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LedgerLine);
    expect(lines.map((l) => `${l.task}#${l.attempt}`).sort()).toEqual(['a#1', 'b#1', 'c#1']);
    const events = readFileSync(join(paths.stateDir, 'batches', 'ledger1.events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; task?: string; host?: string });
    const spawned = events.filter((e) => e.event === 'executor-spawned');
    expect(spawned.map((e) => [e.task, e.host]).sort()).toEqual([
      ['a', 'ledger'],
      ['b', 'ledger'],
      ['c', 'ledger'],
    ]);
    // Each child's work is integrated into the batch branch.
    for (const line of lines) {
      const text = await git(repo, 'show', `batch/ledger1:${line.task}.txt`);
      expect(text).toMatch(new RegExp(`^${line.task} from pid \\d+$`));
    }
    expect(existsSync(join(repo, 'a.txt'))).toBe(false); // (the user's checkout untouched)
  }, 120_000);
});
