import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Script } from '../fixtures/model-server/server.mjs';
import { agentBatch } from '../helpers/agent-batch.js';
import { CLI, git, runCli, tempDir } from '../helpers/repo.js';
import { terminalEnv, Tmux } from '../helpers/tmux.js';

// `lanes plan draft` in a terminal (issue 27): the pinned Claude Code drafts a plan against
// the scripted model server, and the confirmation screen of `lanes start` opens on the
// written file. `e` runs $EDITOR (a command with arguments, split into an argv) on it: an
// edit that breaks the plan shows its problem and the screen stays, with no `y`; an edit that
// mends it shows the new plan, and `y` runs the batch as `lanes start <file>` would. `n`
// leaves the file and starts nothing; --no-confirm only writes it.

const GOAL = 'greet the world in two files';
const PLAN = `batch: greet
executor: script
children:
  - id: hello
    goal: Write hello.txt
    scope: ['hello.txt']
    acceptance:
      - { id: says-hello, run: 'grep -q hello hello.txt' }
    run: 'echo hello > hello.txt'
  - id: bye
    goal: Write bye.txt
    scope: ['bye.txt']
    acceptance:
      - { id: says-bye, run: 'grep -q bye bye.txt' }
    run: 'echo bye > bye.txt'
`;
const script: Script = {
  tasks: [{ match: `# Goal: ${GOAL}`, turns: [{ say: `The plan:\n\n\`\`\`yaml\n${PLAN}\`\`\`\n` }] }],
};

// The editor: its first run adds an unknown field, its second renames the batch and drops
// that field. It notes the arguments it was given, one a line.
const EDITOR = `import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
const [dir, file] = process.argv.slice(2);
appendFileSync(dir + '/args', process.argv.slice(2).join('\\n') + '\\n--\\n');
const text = readFileSync(file, 'utf8');
writeFileSync(file, text.includes('colour') ? text.replace('colour: blue\\n', '').replace('batch: greet', 'batch: edited') : text + 'colour: blue\\n');
`;

const tmuxes: Tmux[] = [];
afterAll(async () => {
  await Promise.all(tmuxes.map((t) => t.kill()));
});

async function draftInTerminal(batch: string, extra: string[] = [], extraEnv: Record<string, string> = {}) {
  const b = await agentBatch('claude', { batch, script });
  const dir = tempDir('lanes-editor-');
  writeFileSync(join(dir, 'edit.mjs'), EDITOR);
  const out = join(tempDir('lanes-draft-'), 'greet.yaml');
  const editor = `${process.execPath} ${join(dir, 'edit.mjs')} ${dir}`;
  const tmux = new Tmux(terminalEnv({ ...b.env, EDITOR: editor, VISUAL: '', ...extraEnv }));
  tmuxes.push(tmux);
  const argv = [
    process.execPath,
    CLI,
    '-C',
    b.repo,
    'plan',
    'draft',
    GOAL,
    '--executor',
    'claude',
    '-o',
    out,
  ];
  await tmux.start([...argv, ...extra], { cwd: b.repo, cols: 80, rows: 24 });
  return { b, dir, out, tmux };
}

describe('lanes plan draft in a terminal', () => {
  it('opens the confirmation on the plan; e edits and checks it again; y starts the batch', async () => {
    const { b, dir, out, tmux } = await draftInTerminal('dc-edit');
    await tmux.waitFor(
      /Start this batch\?[\s\S]*wave 1: hello \(script\), bye \(script\)[\s\S]*y start e edit n quit/,
      60_000,
    );
    expect(readFileSync(out, 'utf8')).toBe(PLAN);
    const widest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));
    expect(widest(await tmux.capture())).toBeLessThanOrEqual(80);
    await tmux.text('e');
    // The broken edit: its problem on the screen, which stays, and without a `y`.
    let screen = await tmux.waitFor(/The plan cannot start yet:[\s\S]*colour/, 20_000);
    expect(screen).toMatch(/e edit n quit/);
    expect(screen).not.toMatch(/y start/);
    expect(widest(screen)).toBeLessThanOrEqual(80);
    await tmux.text('y'); // (nothing to start: the screen stays, and says so)
    await tmux.waitFor(/not until its problems are fixed/, 10_000);
    await tmux.text('e');
    screen = await tmux.waitFor(/Start this batch\?[\s\S]*batch edited: 2 children in 1 wave/, 20_000);
    expect(screen).not.toMatch(/colour/);
    // The editor got its own words and the file, each one argument (no shell between).
    expect(readFileSync(join(dir, 'args'), 'utf8')).toBe(`${dir}\n${out}\n--\n`.repeat(2));
    await tmux.text('y');
    screen = await tmux.waitFor(/^lanes · edited .*completed/m, 60_000);
    const status = JSON.parse((await runCli(['-C', b.repo, 'status', 'edited', '--json'])).stdout) as {
      record: { batch_state: string };
      usage: { total: unknown; children: Record<string, { usage: unknown }> };
    };
    expect(status.record.batch_state).toBe('completed');
    // Command executors report no tokens, and lanes says so: "—" for the selected lane, no
    // figure in the rows or the header, null in status --json.
    expect(screen).toMatch(/^ {3}spent —/m);
    expect(screen).not.toMatch(/tok\b/);
    expect(status.usage).toEqual({
      total: null,
      children: {
        hello: { usage: null, attempts: [{ n: 1, usage: null }] },
        bye: { usage: null, attempts: [{ n: 1, usage: null }] },
      },
    });
    expect(widest(await tmux.capture())).toBeLessThanOrEqual(80);
  }, 150_000);

  it('n leaves the written plan and starts nothing', async () => {
    const { b, out, tmux } = await draftInTerminal('dc-quit');
    await tmux.waitFor(/y start e edit n quit/, 60_000);
    await tmux.text('n');
    await tmux.waitFor(/not started; the plan stays in .*greet\.yaml[\s\S]*EXIT=0/, 20_000);
    expect(readFileSync(out, 'utf8')).toBe(PLAN);
    expect(existsSync(join(b.repo, '.git', 'lanes', 'batches', 'greet'))).toBe(false);
    expect(await git(b.repo, 'branch', '--list', 'batch/greet')).toBe('');
    expect((await runCli(['-C', b.repo, 'status', 'greet'])).exitCode).toBe(2);
  }, 90_000);

  it.each([
    ['--no-confirm', ['--no-confirm'], {}],
    ['CI', [], { CI: 'true' }],
  ])(
    '%s: only writes the plan, as without a terminal',
    async (name, extra, env) => {
      const { out, tmux } = await draftInTerminal(`dc-none-${name.length}`, extra, env);
      const screen = await tmux.waitFor(/EXIT=\d+/, 60_000);
      expect(screen).toMatch(
        /wrote .*greet\.yaml[\s\S]*wave 1: hello \(script\), bye \(script\)[\s\S]*EXIT=0/,
      );
      expect(screen).not.toMatch(/Start this batch/);
      expect(readFileSync(out, 'utf8')).toBe(PLAN);
    },
    90_000,
  );
});
