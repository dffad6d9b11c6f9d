import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/repo.js';
import { Tmux } from '../helpers/tmux.js';

// A live resize of the real terminal (tmux resize-window) while the built `lanes demo`
// runs: the next frame fits the new size, and nothing of the wider frame is left over.

let term: Tmux | null = null;
afterEach(async () => {
  await term?.kill();
  term = null;
});

const linesOf = (screen: string) => screen.replace(/\n+$/, '').split('\n');

describe('the TUI follows a live resize', () => {
  it('redraws at 80×24 with nothing left of the 160×48 frame, and back', async () => {
    const dir = join(tempDir('lanes-resize-'), 'demo');
    term = new Tmux();
    await term.start([process.execPath, CLI, 'demo', '--dir', dir], {
      cwd: tempDir('lanes-cwd-'),
      cols: 160,
      rows: 48,
    });
    await term.waitFor(/Start this batch\?[\s\S]*y start +n cancel/, 60_000);
    await term.keys('y');
    let screen = await term.waitFor(/^lanes · demo {2}batch\/demo {2}running .*integrated/m, 60_000);
    expect(screen).toMatch(/░{20}/); // the bar, at 160 columns

    await term.run('resize-window', '-t', 'main', '-x', '80', '-y', '24');
    screen = await term.waitFor(/^lanes · demo .*integrated {2}(\d+m)?\d+s *$(?![\s\S]*░{20})/m, 30_000);
    const lines = linesOf(screen);
    expect(lines.length).toBeLessThanOrEqual(24);
    // The lane list is 28 columns now: no row shows the 44-column list's pane border at column 45.
    for (const line of lines.slice(1)) expect(line.charAt(45)).not.toMatch(/[│╭╰]/);
    expect(lines.at(-1)).toMatch(/\? keys {2}q quit$/);

    await term.run('resize-window', '-t', 'main', '-x', '160', '-y', '48');
    screen = await term.waitFor(/░{20}|█/, 30_000);
    expect(linesOf(screen).at(-1)).toMatch(/^j\/k select .*\? keys {2}q quit$/);
    // Quit (stopping the executors) and let lanes exit before the folders go.
    await term.keys('q');
    const asked = await term.waitFor(/Quit\?|^EXIT=\d+$/m, 30_000);
    if (/Quit\?/.test(asked)) await term.keys('y');
    await term.waitFor(/^EXIT=\d+$/m, 60_000);
  }, 200_000);
});
