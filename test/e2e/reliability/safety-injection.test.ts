import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCheck } from '../../../src/qa/check-runner.js';
import { wrapWithExitStatus } from '../../../src/hosts/exit-status.js';
import { execa } from 'execa';
import { git, tempDir } from '../../helpers/repo.js';
import { integratedTasks, lanesProcess, leanRepo, readRecord, stateDir, writePlan } from './support.js';

// A hostile plan causes no command injection (docs/RELIABILITY.md). Goals, prompts, a lanes
// root and check arguments full of `$(...)`, backticks, `;`, newlines and `../` flow into
// the prompt (an argument of the executor), the prompt file, the commit messages, git's
// command lines and the acceptance checks; each tries to create a canary file. No canary
// may ever appear: lanes runs every command as an argv, and a shell only where the plan or
// the profile names one (a check given as a string, the `script` executor's `run`, a
// profile whose argv starts with `sh -c`) — and then never with plan text spliced into it.

function hostile(canary: string, n: number): string {
  return `$(touch ${canary}-${n}a) \`touch ${canary}-${n}b\`; touch ${canary}-${n}c && ../../etc/passwd "'`;
}

describe('a hostile plan', () => {
  it('runs to completion and no canary is ever created', async () => {
    const canaries = tempDir('lanes-canary-');
    const canary = join(canaries, 'CANARY');
    const repo = await leanRepo();
    // A profile that names a shell for a fixed script, and hands it the prompt, the task and
    // the lane as arguments ($1..$3) and the prompt file as $4: never spliced into the script.
    writeFileSync(
      join(repo, 'lanes.config.json'),
      JSON.stringify({
        executors: {
          echoer: {
            argv: [
              'sh',
              '-c',
              'mkdir -p out && printf "%s" "$1" > out/prompt.txt && printf "%s|%s" "$2" "$3" > out/args.txt && cat "$4" > out/prompt-file.txt',
              'echoer',
              '{prompt}',
              '{task}',
              '{lane}',
              '{prompt_file}',
            ],
          },
        },
        lanes_root: `../lanes ${hostile(canary, 0)}/{batch}/{child}`,
      }),
    );
    await git(repo, 'add', 'lanes.config.json');
    await git(repo, 'commit', '-q', '-m', 'config');
    const goal = `Write out ${hostile(canary, 1)}\nsecond line ${hostile(canary, 2)}`;
    const plan = writePlan({
      batch: 'inj',
      children: [
        {
          id: 'P',
          goal,
          executor: 'echoer',
          scope: ['out/**'],
          acceptance: [
            { id: 'literal-arg', run: ['test', '-n', hostile(canary, 3)] },
            { id: 'prompt', run: ['grep', '-qF', 'touch', 'out/prompt.txt'] },
          ],
        },
        {
          id: 'S',
          goal: hostile(canary, 4),
          executor: 'script',
          blocked_by: ['P'],
          scope: ['s/**'],
          acceptance: [{ id: 'ok', run: ['test', '-f', 's/done'] }],
          run: 'mkdir -p s && touch s/done',
        },
      ],
    });
    const planText = JSON.parse(readFileSync(plan, 'utf8')) as { children: { prompt?: string }[] };
    planText.children[0]!.prompt = `Extra: ${hostile(canary, 5)}`;
    writeFileSync(plan, JSON.stringify(planText));

    const result = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readdirSync(canaries)).toEqual([]);

    const record = readRecord(repo, 'inj')!;
    expect(record.batch_state).toBe('completed');
    expect(await integratedTasks(repo, `${record.base_head}..batch/inj`)).toEqual(['P', 'S']);
    // The goal reached the executor whole, as one argument, and the prompt file holds it too.
    const prompt = await git(repo, 'show', 'batch/inj:out/prompt.txt');
    expect(prompt).toContain(goal);
    expect(prompt).toContain(`Extra: ${hostile(canary, 5)}`);
    expect(await git(repo, 'show', 'batch/inj:out/prompt-file.txt')).toContain(goal);
    const promptFile = readFileSync(
      join(stateDir(repo), 'batches', 'inj', 'logs', 'P', 'prompt-1.md'),
      'utf8',
    );
    expect(promptFile).toContain(goal);
    const lane = record.children.find((c) => c.task_id === 'P')!.lane!.path;
    expect(await git(repo, 'show', 'batch/inj:out/args.txt')).toBe(`P|${lane}`);
    expect(lane).toContain(`lanes $(touch ${canary}-0a) \`touch ${canary}-0b\`; touch `); // (resolved: no `..`)
    // The commit messages carry the goal's first line as text, and the trailers are lanes' own.
    const subjects = await git(repo, 'log', '--format=%s', `${record.base_head}..batch/inj`);
    expect(subjects).toContain(`lanes(P): ${goal.split('\n')[0]!.slice(0, 120)}`); // (subjects are cut at 120)
    const trailers = await git(
      repo,
      'log',
      '-1',
      '--format=%(trailers:only,unfold)',
      record.children[0]!.commit!,
    );
    expect(trailers).toContain('Lanes-Task: P');
    expect(trailers).not.toContain('second line');
    expect(readdirSync(canaries)).toEqual([]);
  }, 120_000);

  it('an argv check and an executor argv are never re-split by a shell', async () => {
    const canaries = tempDir('lanes-canary-');
    const canary = join(canaries, 'CANARY');
    const cwd = tempDir('lanes-cwd-');
    // An acceptance check given as an argv: its arguments are passed as they are.
    const check = await runCheck(
      cwd,
      { id: 'c', run: ['printf', '%s', hostile(canary, 1)], timeout_ms: 10_000 },
      null,
    );
    expect(check.exit_code).toBe(0);
    expect(check.tail).toContain(hostile(canary, 1));
    // The exit-status wrapper every executor runs under passes its argv on with "$@".
    const status = join(cwd, 'status');
    const wrapped = wrapWithExitStatus(['printf', '%s', hostile(canary, 2)], status);
    const out = await execa(wrapped[0]!, wrapped.slice(1), { cwd });
    expect(out.stdout).toBe(hostile(canary, 2));
    expect(readFileSync(status, 'utf8').trim()).toBe('0');
    expect(readdirSync(canaries)).toEqual([]);
  });
});
