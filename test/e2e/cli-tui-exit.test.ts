import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, makeRepo } from '../helpers/repo.js';
import { Tmux } from '../helpers/tmux.js';

// Leaving the TUI prints the same summary and next steps as a headless run (issue 26):
// the screen is gone, and what the user reads next in their shell says how to go on.

const PLAN = `batch: leave
budget: { qa_failure_limit: 1 }
executor: script
children:
  - id: red
    goal: A check that fails
    scope: ["red.txt"]
    acceptance: [{ id: redcheck, run: "false" }]
    run: "echo red > red.txt"
`;

let tmux: Tmux | null = null;
afterEach(async () => {
  await tmux?.kill();
  tmux = null;
});

describe('leaving the TUI', () => {
  it('prints the report and the way on, like headless', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, '..', 'plan.yaml'), PLAN);
    tmux = new Tmux();
    await tmux.start([process.execPath, CLI, 'start', '../plan.yaml', '--yes'], {
      cwd: repo,
      cols: 160,
      rows: 48,
    });
    await tmux.waitFor(/needs_human/, 30_000);
    await tmux.keys('q');
    const screen = await tmux.waitFor(/EXIT=\d+/, 30_000);
    expect(screen).toMatch(/EXIT=3/);
    expect(screen).toMatch(/^leave {2}needs_human/m);
    expect(screen).toMatch(/next: red: fix the lane .* resume leave --approve/);
  }, 90_000);
});
