import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { snapshotTree, tempDir } from '../../helpers/repo.js';
import { copyRepo, lanesInProcess, leanRepo } from './support.js';

// Bad command lines (docs/RELIABILITY.md): each exits 2 with a message naming what is wrong,
// prints nothing on stdout and writes nothing (the repository's .git, state dir included,
// is byte for byte the same). Run in this process through `run` (src/cli/run.ts), so that
// arguments may hold what argv cannot carry (a NUL byte).

const LONG = 'x'.repeat(5000);
let repo: string;
let plan: string;
let otherTopology: string;
let otherBatch: string;
let claudeBatch: string;
let unknownExecutor: string;
let scriptWithoutRun: string;
let aFile: string;
/** Plans of batch b2 whose base names no commit, by the base. */
const badBases = new Map<string, string>();

beforeAll(async () => {
  const template = await leanRepo();
  const dir = tempDir('lanes-args-');
  plan = join(dir, 'b1.yaml');
  writeFileSync(
    plan,
    'batch: b1\nchildren:\n  - { id: T1, goal: g, scope: [src], acceptance: [{ id: A1, run: ["true"] }] }\n' +
      '  - { id: T2, goal: g, blocked_by: [T1], scope: [doc], acceptance: [{ id: A1, run: ["true"] }] }\n',
  );
  otherTopology = join(dir, 'b1-other.yaml');
  writeFileSync(
    otherTopology,
    'batch: b1\nchildren:\n  - { id: T1, goal: g, scope: [src], acceptance: [{ id: A1, run: ["true"] }] }\n' +
      '  - { id: T2, goal: g, scope: [doc], acceptance: [{ id: A1, run: ["true"] }] }\n',
  );
  otherBatch = join(dir, 'b2.yaml');
  writeFileSync(
    otherBatch,
    'batch: b2\nexecutor: script\nchildren:\n  - { id: T1, goal: g, run: "true", scope: [lib], acceptance: [{ id: A1, run: ["true"] }] }\n',
  );
  claudeBatch = join(dir, 'b3.yaml');
  writeFileSync(
    claudeBatch,
    'batch: b3\nchildren:\n  - { id: T1, goal: g, scope: [src], acceptance: [{ id: A1, run: ["true"] }] }\n' +
      '  - { id: T2, goal: g, scope: [doc], acceptance: [{ id: A1, run: ["true"] }] }\n',
  );
  // Same batch and topology as b1, but children that cannot run.
  unknownExecutor = join(dir, 'b1-unknown-executor.yaml');
  writeFileSync(
    unknownExecutor,
    'batch: b1\nchildren:\n  - { id: T1, goal: g, executor: nope, scope: [src], acceptance: [{ id: A1, run: ["true"] }] }\n' +
      '  - { id: T2, goal: g, blocked_by: [T1], scope: [doc], acceptance: [{ id: A1, run: ["true"] }] }\n',
  );
  scriptWithoutRun = join(dir, 'b1-script-without-run.yaml');
  writeFileSync(
    scriptWithoutRun,
    'batch: b1\nexecutor: script\nchildren:\n  - { id: T1, goal: g, scope: [src], acceptance: [{ id: A1, run: ["true"] }] }\n' +
      '  - { id: T2, goal: g, blocked_by: [T1], scope: [doc], acceptance: [{ id: A1, run: ["true"] }] }\n',
  );
  for (const [i, base] of ['no-such-branch', 'HEAD^{tree}', 'HEAD main', '-q'].entries()) {
    const file = join(dir, `b2-base-${i}.yaml`);
    writeFileSync(
      file,
      `batch: b2\nbase: ${JSON.stringify(base)}\nexecutor: script\nchildren:\n  - { id: T1, goal: g, run: "true", scope: [lib], acceptance: [{ id: A1, run: ["true"] }] }\n`,
    );
    badBases.set(base, file);
  }
  aFile = join(dir, 'a-file');
  writeFileSync(aFile, 'not a directory\n');
  mkdirSync(join(dir, 'a-dir.yaml'));
  // A repository with a confirmed batch b1 (prepared), so batch commands get past "no such batch".
  repo = copyRepo(template);
  const r = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--no-run', '--headless']);
  expect(r.exitCode, r.stderr).toBe(0);
});

/** [arguments after `-C <repo>` (or whole, when they start with -C), what stderr must say] */
const CASES: [string, () => string[], string][] = [
  ['unknown command', () => ['frobnicate'], 'unknown command "frobnicate"'],
  ['unknown option', () => ['status', '--bogus'], "Unknown option '--bogus'"],
  ['-C without a directory', () => ['-C'], '-C needs a directory'],
  ['-C to a missing directory', () => ['-C', '/nonexistent/lanes-x', 'status'], 'no such directory'],
  ['-C to a file', () => ['-C', aFile, 'status'], 'no such directory'],
  ['-C with a NUL byte', () => ['-C', '/tmp/a\0b', 'status'], 'no such directory'],
  ['-C of 5000 characters', () => ['-C', `/${LONG}`, 'status'], 'no such directory'],
  ['plan without check', () => ['plan'], 'usage: lanes plan check <plan>'],
  ['plan check without a plan', () => ['plan', 'check'], 'usage: lanes plan check <plan>'],
  ['plan check with two plans', () => ['plan', 'check', plan, plan], 'unexpected argument'],
  ['plan check of a folder', () => ['plan', 'check', join(plan, '..', 'a-dir.yaml')], 'cannot read it'],
  ['plan check of a missing file', () => ['plan', 'check', '/nonexistent/p.yaml'], 'no such file'],
  ['plan check of a 5000-character path', () => ['plan', 'check', `/${LONG}.yaml`], 'cannot read it'],
  ['plan check of a path with NUL', () => ['plan', 'check', '/tmp/p\0.yaml'], 'cannot read it'],
  ['start without a plan', () => ['start'], 'usage: lanes start <plan>'],
  ['start --parallel 0', () => ['start', plan, '--parallel', '0'], '--parallel expects a whole number > 0'],
  [
    'start --parallel 1.5',
    () => ['start', plan, '--parallel', '1.5'],
    '--parallel expects a whole number > 0',
  ],
  [
    'start --parallel abc',
    () => ['start', plan, '--parallel', 'abc'],
    '--parallel expects a whole number > 0',
  ],
  [
    'start --parallel 1e3',
    () => ['start', plan, '--parallel', '1e3'],
    '--parallel expects a whole number > 0',
  ],
  ['start --parallel without a value', () => ['start', plan, '--parallel'], "Option '--parallel <value>'"],
  ['start --host tmux', () => ['start', plan, '--host', 'tmux'], '--host must be herdr, pty or headless'],
  ['start --executor unknown', () => ['start', plan, '--yes', '--executor', 'nope'], 'nope'],
  ['start --executor with $(...)', () => ['start', plan, '--yes', '--executor', '$(touch x)'], '$(touch x)'],
  ['start without --yes and no terminal', () => ['start', otherBatch, '--headless'], 'pass --yes'],
  ['start of a batch that exists', () => ['start', plan, '--yes', '--no-run'], 'already exists'],
  [
    'start with an option of another command',
    () => ['start', plan, '--offer', 'x'],
    "Unknown option '--offer'",
  ],
  ['resume of an unknown batch', () => ['resume', 'nope', '--headless'], 'no batch named "nope"'],
  ['resume of a batch id with ../', () => ['resume', '../b1'], 'is not a valid batch id'],
  ['resume of a 5000-character batch id', () => ['resume', LONG], 'is not a valid batch id'],
  ['resume --replan without --approve', () => ['resume', 'b1', '--replan', plan], '--replan needs --approve'],
  [
    'resume --replan with another topology',
    () => ['resume', 'b1', '--headless', '--approve', '--replan', otherTopology],
    'changes the children or their blocked_by',
  ],
  [
    'resume --replan with an executor that does not exist',
    () => ['resume', 'b1', '--headless', '--approve', '--replan', unknownExecutor],
    'unknown executor profile "nope"',
  ],
  [
    'resume --replan with a script child without run',
    () => ['resume', 'b1', '--headless', '--approve', '--replan', scriptWithoutRun],
    'required by the "script" executor',
  ],
  [
    'tick --approve --replan with an executor that does not exist',
    () => ['tick', 'b1', '--approve', '--replan', unknownExecutor],
    'unknown executor profile "nope"',
  ],
  ['resume with an extra argument', () => ['resume', 'b1', 'extra'], 'unexpected argument "extra"'],
  ['resume --budget without --approve', () => ['resume', 'b1', '--budget', '5'], 'need --approve'],
  [
    'resume --budget 0',
    () => ['resume', 'b1', '--approve', '--budget', '0'],
    '--budget expects a whole number > 0',
  ],
  [
    'resume --budget not larger than max_children',
    () => ['resume', 'b1', '--headless', '--approve', '--budget', '2'],
    'must be larger than the current max_children 2',
  ],
  [
    'resume --parallel x',
    () => ['resume', 'b1', '--approve', '--parallel', 'x'],
    '--parallel expects a whole',
  ],
  ['drop without a child', () => ['drop', 'b1'], 'usage: lanes drop <batch> <child>'],
  ['drop of an unknown batch', () => ['drop', 'nope', 'T1'], 'no batch named "nope"'],
  ['drop of an unknown child', () => ['drop', 'b1', 'T9'], 'no child "T9"'],
  ['drop of a child id with ../', () => ['drop', 'b1', '../T1'], 'is not a valid child id'],
  ['drop with an extra argument', () => ['drop', 'b1', 'T1', 'T2'], 'unexpected argument "T2"'],
  ['cancel without a batch', () => ['cancel'], 'usage: lanes cancel <batch>'],
  ['cancel of an unknown batch', () => ['cancel', 'nope'], 'no batch named "nope"'],
  ['cancel of a batch id with NUL', () => ['cancel', 'b1\0x'], 'is not a valid batch id'],
  ['resume --host x', () => ['resume', 'b1', '--host', 'x'], '--host must be herdr, pty or headless'],
  ['resume --move without --approve', () => ['resume', 'b1', '--move', 'T1=local'], '--move needs --approve'],
  [
    'resume --move without a machine',
    () => ['resume', 'b1', '--approve', '--move', 'T1'],
    '--move "T1": expected <child>=<machine>',
  ],
  [
    'resume --move with an empty child',
    () => ['resume', 'b1', '--approve', '--move', '=local'],
    '--move "=local": expected <child>=<machine>',
  ],
  [
    'resume --move of an unknown child',
    () => ['resume', 'b1', '--headless', '--approve', '--move', 'T9=local'],
    'no child "T9" in batch b1',
  ],
  [
    'resume --move to a machine the config does not have',
    () => ['resume', 'b1', '--headless', '--approve', '--move', 'T1=box-z'],
    '"box-z" is not a machine of lanes.config.json (machines: local)',
  ],
  [
    'resume --move of a child that is not parked',
    () => ['resume', 'b1', '--headless', '--approve', '--move', 'T1=local'],
    'child T1 is pending; only a parked child is moved',
  ],
  [
    'resume --move of a child twice',
    () => ['resume', 'b1', '--headless', '--approve', '--move', 'T1=local', '--move', 'T1=local'],
    '--move names T1 twice',
  ],
  ['tick without a batch', () => ['tick'], 'usage: lanes tick <batch>'],
  ['tick of an unknown batch', () => ['tick', 'nope'], 'no batch named "nope"'],
  ['tick of a batch id with NUL', () => ['tick', 'b1\0x'], 'is not a valid batch id'],
  ['tick --offer without a path', () => ['tick', 'b1', '--offer', 'T1'], 'expected T1=<absolute lane path>'],
  ['tick --offer of a relative path', () => ['tick', 'b1', '--offer', 'T1=rel/path'], 'must be absolute'],
  ['tick --offer of a path with NUL', () => ['tick', 'b1', '--offer', 'T1=/tmp/a\0b'], 'NUL byte'],
  [
    'tick --offer of a 5000-character path',
    () => ['tick', 'b1', '--offer', `T1=/${LONG}`],
    'longer than 4096 characters',
  ],
  ['tick --offer of a child id with ../', () => ['tick', 'b1', '--offer', '../T1=/tmp'], 'is not a child id'],
  ['tick --exited 256', () => ['tick', 'b1', '--exited', 'T1=256'], 'expected an exit code 0-255'],
  ['tick --exited abc', () => ['tick', 'b1', '--exited', 'T1=abc'], 'expected an exit code 0-255'],
  ['tick --exited of an unknown child', () => ['tick', 'b1', '--exited', 'ZZ'], 'has no child "ZZ"'],
  ['tick --review maybe', () => ['tick', 'b1', '--review', 'T1=maybe'], '--review expects'],
  ['tick --replan without --approve', () => ['tick', 'b1', '--replan', plan], '--replan needs --approve'],
  ['status of a 5000-character batch id', () => ['status', LONG], 'is not a valid batch id'],
  ['status of an unknown batch', () => ['status', 'nope'], 'no batch named "nope"'],
  ['wait without --until', () => ['wait', 'b1'], 'usage: lanes wait'],
  ['wait --until an unknown state', () => ['wait', 'b1', '--until', 'finished'], 'unknown state "finished"'],
  [
    'wait --timeout 0',
    () => ['wait', 'b1', '--until', 'completed', '--timeout', '0'],
    '--timeout expects a whole number > 0',
  ],
  ['log --follow --json', () => ['log', 'b1', '--follow', '--json'], 'cannot --follow'],
  ['log of an unknown batch', () => ['log', 'nope'], 'no batch named "nope"'],
  ['demo with an unknown option', () => ['demo', '--bogus'], "Unknown option '--bogus'"],
  // Executor preferences and the executor preflight (b1's children run the default, claude,
  // which this machine's PATH does not have).
  [
    'start --effort hgih',
    () => ['start', otherBatch, '--yes', '--effort', 'hgih'],
    '--effort "hgih" must be one of',
  ],
  [
    'start --model with a blank',
    () => ['start', otherBatch, '--yes', '--model', 'a b'],
    'must be a model name',
  ],
  [
    'start --model that reads as a flag',
    () => ['start', otherBatch, '--yes', '--model=-x'],
    'must be a model name',
  ],
  [
    'start with an executor that is not on PATH',
    () => ['start', otherBatch, '--yes', '--headless', '--executor', 'codex'],
    'executor profile "codex" runs "codex", which is not on PATH (child T1)',
  ],
  [
    'start of children whose executor is not on PATH',
    () => ['start', claudeBatch, '--yes', '--headless'],
    'executor profile "claude" runs "claude", which is not on PATH (children T1, T2)',
  ],
  ...['no-such-branch', 'HEAD^{tree}', 'HEAD main', '-q'].map((base): [string, () => string[], string] => [
    `start with the base ${base}, which names no commit`,
    () => ['start', badBases.get(base)!, '--yes', '--headless'],
    `base "${base}" does not name a commit`,
  ]),
  [
    'resume of a batch whose executor is not on PATH',
    () => ['resume', 'b1', '--headless'],
    'executor profile "claude" runs "claude", which is not on PATH (children T1, T2)',
  ],
];

describe('bad command lines: exit 2, a message, nothing written', () => {
  it('has the cases', () => expect(CASES.length).toBeGreaterThanOrEqual(50));
  // (`lanes` alone prints the help on stdout and exits 2: test/cli.test.ts.)
  it.each(CASES)('%s', async (_name, args, fragment) => {
    const before = snapshotTree(join(repo, '.git'));
    const argv = args();
    const r = await lanesInProcess(argv[0] === '-C' ? argv : ['-C', repo, ...argv], repo);
    expect(r.stderr).toContain(fragment);
    expect(r.stderr).not.toContain('unexpected error');
    expect(r.stdout).toBe('');
    expect(r.exitCode).toBe(2);
    expect(snapshotTree(join(repo, '.git'))).toEqual(before);
  });
});
