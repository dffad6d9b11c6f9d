import { cleanup, render } from 'ink-testing-library';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { Footer } from '../../components/Footer.js';
import { Header, progressBar } from '../../components/Header.js';
import { LaneList } from '../../components/LaneList.js';
import { PaneView } from '../../components/PaneView.js';
import { diffLines, TextViewer } from '../../components/TextViewer.js';
import { stateColor } from '../../components/theme.js';
import type { LaneSession } from '../../src/hosts/host.js';
import { footerHints } from '../../src/tui/keymap.js';
import { FakeSession, KEY, plain, row, settled, snapshot, waitFor, waitForFrame } from '../helpers/tui.js';

// The views one by one, with colour on: chalk reads FORCE_COLOR when it is first imported,
// so it is set before the imports (vi.hoisted) and restored after the file. Level 3 keeps
// the pane's exact colours (ansi256 and true colour) in the escapes.

const previousEnv = vi.hoisted(() => {
  const previous = { FORCE_COLOR: process.env.FORCE_COLOR, COLORTERM: process.env.COLORTERM };
  // FORCE_COLOR alone gives level 1 under TERM=xterm; a true-colour terminal gives level 3.
  process.env.FORCE_COLOR = '3';
  process.env.COLORTERM = 'truecolor';
  return previous;
});
afterAll(() => {
  for (const [name, value] of Object.entries(previousEnv))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});
afterEach(() => cleanup());

const ESC = '\x1b[';
const fg256 = (n: number) => `${ESC}38;5;${n}m`;
const bg256 = (n: number) => `${ESC}48;5;${n}m`;
const SGR = { bold: `${ESC}1m`, red: `${ESC}31m`, green: `${ESC}32m`, yellow: `${ESC}33m` };
const SGR_MORE = { magenta: `${ESC}35m`, cyan: `${ESC}36m`, gray: `${ESC}90m`, blueBright: `${ESC}94m` };

describe('PaneView', () => {
  it('draws a real screen model fed with ANSI text, colours kept', async () => {
    const session = new FakeSession('div', 40, 6);
    await session.print(
      [
        `${ESC}31mred${ESC}0m plain`,
        `${ESC}1;38;5;208mbold orange${ESC}0m`,
        `${ESC}38;2;255;136;0mtrue colour${ESC}0m`,
        `${ESC}44mon blue${ESC}0m`,
        'half\rwhole', // a carriage return overwrites, as on a terminal
      ].join('\r\n'),
    );
    const ui = render(
      <PaneView title="div" session={session} width={44} height={9} focused attached={false} />,
    );
    const styled = await waitForFrame(ui.lastFrame, 'whole', { styled: true });
    const text = plain(styled).split('\n');
    expect(text.slice(0, 8)).toEqual([
      `╭${'─'.repeat(42)}╮`,
      `│div${' '.repeat(39)}│`,
      `│red plain${' '.repeat(33)}│`,
      `│bold orange${' '.repeat(31)}│`,
      `│true colour${' '.repeat(31)}│`,
      `│on blue${' '.repeat(35)}│`,
      `│whole${' '.repeat(37)}│`,
      `│${' '.repeat(42)}│`,
    ]);
    // Palette colours go through ansi256, true colour through hex; bold and background kept.
    expect(styled).toContain(`${fg256(1)}red`);
    expect(styled).toMatch(
      new RegExp(
        `(${escape(SGR.bold)}${escape(fg256(208))}|${escape(fg256(208))}${escape(SGR.bold)})bold orange`,
      ),
    );
    expect(styled).toContain(`${ESC}38;2;255;136;0mtrue colour`);
    expect(styled).toContain(`${bg256(4)}on blue`);
    expect(styled).toContain(`${fg256(1)}red${ESC}39m plain`); // ' plain' has the default colour
  });

  it('keeps only the screen: a long output shows its last rows', async () => {
    const session = new FakeSession('log', 30, 4);
    await session.print(Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\r\n'));
    const ui = render(
      <PaneView title="log" session={session} width={34} height={7} focused attached={false} />,
    );
    const frame = await waitForFrame(ui.lastFrame, 'line 20');
    expect(frame).toContain('line 17');
    expect(frame).not.toContain('line 16');
  });

  it('shows the recent lines of a host without a screen model, and the attached title', async () => {
    const herdrLike: LaneSession = {
      taskId: 'mul',
      host: 'herdr',
      pid: null,
      paneId: 'tab-1',
      exited: new Promise(() => {}),
      running: true,
      onOutput: () => () => {},
      write: () => {},
      resize: () => {},
      kill: () => {},
      recentLines: (count) => ['mul: working', 'mul: done'].slice(-count),
    };
    const ui = render(<PaneView title="mul" session={herdrLike} width={40} height={6} focused attached />);
    const styled = await waitForFrame(ui.lastFrame, 'mul: done', { styled: true });
    expect(plain(styled)).toContain('mul · attached (ctrl-g detaches)');
    expect(plain(styled)).toContain('mul: working');
    expect(styled).toContain(`${ESC}92m`); // the attached border is bright green
  });

  it('says so when no executor runs in the lane', async () => {
    const ui = render(
      <PaneView title="index" session={null} width={40} height={5} focused={false} attached={false} />,
    );
    const styled = await waitForFrame(ui.lastFrame, 'no executor running in this lane', { styled: true });
    expect(styled).toContain(SGR_MORE.gray); // an unfocused pane has a gray border
  });
});

describe('Header', () => {
  it('draws the progress bar of integrated / total', () => {
    expect(progressBar(0, 8)).toBe('░'.repeat(20));
    expect(progressBar(3, 8)).toBe(`${'█'.repeat(8)}${'░'.repeat(12)}`);
    expect(progressBar(8, 8)).toBe('█'.repeat(20));
    expect(progressBar(0, 0)).toBe('░'.repeat(20));
    expect(progressBar(1, 2, 4)).toBe('██░░');
  });

  it('colours the batch state, shows a paused dispatch, and stays on one row', async () => {
    const s = snapshot([row('a'), row('b')], {
      batchState: 'completed',
      wave: 4,
      waves: 4,
      integrated: 2,
      startedAt: 0,
    });
    const ui = render(<Header snapshot={s} now={125_000} width={100} />);
    const styled = await waitForFrame(ui.lastFrame, 'integrated', { styled: true });
    expect(plain(styled)).toBe(
      `lanes · demo  batch/demo  completed  wave 4/4  ${'█'.repeat(20)} 2/2 integrated  2m05s`,
    );
    expect(styled).toContain(`${SGR.green}completed`);
    // Paused, the row is longer than the 100 columns: the bar goes, the count and the clock stay.
    ui.rerender(<Header snapshot={{ ...s, paused: true }} now={125_000} width={100} />);
    const paused = await waitForFrame(ui.lastFrame, 'dispatch paused', { styled: true });
    expect(plain(paused)).toBe(
      `lanes · demo  batch/demo  completed  dispatch paused  wave 4/4  2/2 integrated  2m05s`,
    );
    // At 64 columns the branch and the wave go too.
    ui.rerender(<Header snapshot={{ ...s, paused: true }} now={125_000} width={64} />);
    await waitForFrame(ui.lastFrame, (f) => !f.includes('wave'));
    expect(plain(ui.lastFrame())).toBe('lanes · demo  completed  dispatch paused  2/2 integrated  2m05s');
    expect(paused).toContain(`${SGR.yellow}dispatch paused`);
  });
});

describe('LaneList', () => {
  it('colours each state and health tag, and marks the selected lane', async () => {
    const rows = [
      row('add', { state: 'released', attempt: 1 }),
      row('div', { state: 'enrolled', attempt: 1, health: { waiting: true, stalled: false, drift: [] } }),
      row('pow', { state: 'enrolled', attempt: 1, health: { waiting: false, stalled: true, drift: [] } }),
      row('sqrt', { state: 'needs_human', attempt: 2, qaFailures: 2, reason: 'QA failure limit reached' }),
      row('mean', { state: 'skipped_blocked', reason: 'blocked by parked child sqrt' }),
      row('mul', { state: 'settled', attempt: 1, reviewPending: true }),
      row('sub', { state: 'enrolled', attempt: 1, health: { waiting: false, stalled: false, drift: ['x'] } }),
      row('index', { state: 'pending' }),
    ];
    const ui = render(<LaneList rows={rows} selected={3} now={0} width={44} height={20} />);
    const styled = await waitForFrame(ui.lastFrame, 'index', { styled: true });
    expect(styled).toContain(`${SGR.green}released`);
    expect(styled).toContain(`${SGR_MORE.cyan}enrolled`);
    expect(styled).toContain(`${SGR.yellow}needs_human`);
    expect(styled).toContain(`${SGR.yellow}skipped_blocked`);
    expect(styled).toContain(`${SGR_MORE.cyan}settled`);
    expect(styled).toContain(`${SGR_MORE.gray}pending`);
    expect(styled).toContain(`${SGR_MORE.magenta}waiting`);
    expect(styled).toContain(`${SGR.red}stalled`);
    expect(styled).toContain(`${SGR_MORE.magenta}review`);
    expect(styled).toContain(`${SGR.red}scope drift`);
    expect(plain(styled)).not.toContain('blocked by parked child'); // only the selected lane's reason
    expect(styled).toContain(`${SGR_MORE.blueBright}›`);
    expect(styled).toMatch(new RegExp(`${escape(SGR.yellow)} +QA failure limit reached`));
    const lines = plain(styled).split('\n');
    expect(lines[1]).toMatch(/^ {2}div +enrolled +waiting #1/);
    expect(lines[3]).toMatch(/^› sqrt +needs_human +#2 qa✗2/);
    expect(lines[4]).toMatch(/^ {3}QA failure limit reached/);
  });

  it('uses one colour per state everywhere', () => {
    expect(stateColor('integrated')).toBe('green');
    expect(stateColor('skipped_blocked')).toBe('yellow');
    expect(stateColor('rejected')).toBe('red');
    expect(stateColor('prepared')).toBe('gray');
    expect(stateColor('lane_committed')).toBe('cyan');
  });
});

describe('TextViewer', () => {
  const DIFF = [
    'diff --git a/src/sqrt.mjs b/src/sqrt.mjs',
    'index 1111111..2222222 100644',
    '--- a/src/sqrt.mjs',
    '+++ b/src/sqrt.mjs',
    '@@ -1 +1,5 @@',
    '-export const sqrt = (x) => Math.sqrt(x) + 1;',
    '+export const sqrt = (x) => {',
    ' context',
  ].join('\n');

  it('colours diff lines by kind', async () => {
    expect(diffLines(DIFF).map((l) => l.color ?? null)).toEqual([
      'yellow',
      'yellow',
      'white',
      'white',
      'cyan',
      'red',
      'green',
      null,
    ]);
    const ui = render(
      <TextViewer title="diff of sqrt" lines={diffLines(DIFF)} height={12} onClose={() => {}} active />,
    );
    const styled = await waitForFrame(ui.lastFrame, 'context', { styled: true });
    expect(styled).toContain(`${SGR.red}-export const sqrt = (x) => Math.sqrt(x) + 1;`);
    expect(styled).toContain(`${SGR.green}+export const sqrt = (x) => {`);
    expect(styled).toContain(`${SGR_MORE.cyan}@@ -1 +1,5 @@`);
    expect(styled).toContain(`${SGR.yellow}diff --git a/src/sqrt.mjs b/src/sqrt.mjs`);
  });

  it('scrolls with j/k, space/b and g/G, and closes with q', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => ({ text: `row ${i + 1}` }));
    let closed = 0;
    const ui = render(
      <TextViewer title="QA log" lines={lines} height={10} onClose={() => closed++} active />,
    );
    const at = async (key: string, range: string) => {
      ui.stdin.write(key);
      const frame = await waitForFrame(ui.lastFrame, `(${range} of 30)`);
      await settled();
      return frame;
    };
    await waitForFrame(ui.lastFrame, '(1-7 of 30)');
    await settled();
    expect(await at('j', '2-8')).toContain('row 8');
    await at(KEY.DOWN, '3-9');
    await at('k', '2-8');
    await at(KEY.UP, '1-7');
    await at('k', '1-7'); // not above the top
    const paged = await at(' ', '8-14');
    expect(paged).not.toMatch(/row 7\b/);
    await at('b', '1-7');
    const end = await at('G', '24-30');
    expect(end).toContain('row 30');
    await at(' ', '24-30'); // not past the end
    await at('g', '1-7');
    ui.stdin.write('q');
    await waitFor(() => closed === 1);
    ui.stdin.write(KEY.ESC);
    await waitFor(() => closed === 2);
  });
});

describe('Footer', () => {
  it('shows the hints of the given commands and the notice', async () => {
    expect(footerHints(['select-next', 'attach', 'quit'])).toBe('j/k select  enter attach  q quit');
    expect(footerHints(['select-prev'])).toBe(''); // k has no hint of its own: j/k covers it
    // Narrow: the keys of least use now go first; ? stays.
    expect(footerHints(['select-next', 'grid', 'resume', 'pause', 'help', 'quit'], 40)).toBe(
      'j/k select  r resume  ? keys  q quit',
    );
    const ui = render(<Footer commands={['diff', 'help']} notice="sqrt needs you" width={100} />);
    const styled = await waitForFrame(ui.lastFrame, 'keys', { styled: true });
    expect(plain(styled)).toBe('sqrt needs you\nd diff  ? keys');
    expect(styled).toContain(`${SGR.yellow}sqrt needs you`);
  });
});

function escape(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
