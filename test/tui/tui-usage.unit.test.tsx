import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { Header } from '../../components/Header.js';
import { LaneList } from '../../components/LaneList.js';
import { plain, row, snapshot } from '../helpers/tui.js';

// Tokens per lane in the TUI (issue 27): the selected lane says what its agent reported it
// spent (tokens, and the agent's cost where it gives one), a command's lane says "—", and
// the header carries the batch's sum, also in a list of 80 columns (28 wide).

afterEach(() => cleanup());

const claude = { input_tokens: 3700, output_tokens: 170, cost_usd: 0.0225 };
const DRIFT = { waiting: false, stalled: false, drift: ['README.md'] };
const codex = { input_tokens: 2468, output_tokens: 112, cost_usd: null };

describe('the lanes’ spending', () => {
  it('shows the selected lane’s tokens and cost, and "—" for a command', () => {
    const rows = [row('a', { state: 'enrolled', usage: claude }), row('b', { usage: codex }), row('cmd')];
    const ui = render(<LaneList rows={rows} selected={0} now={0} width={28} height={10} />);
    expect(plain(ui.lastFrame()!)).toContain('   spent 3.9k tok $0.02');
    ui.rerender(<LaneList rows={rows} selected={1} now={0} width={28} height={10} />);
    expect(plain(ui.lastFrame()!)).toContain('   spent 2.6k tok\n');
    ui.rerender(<LaneList rows={rows} selected={2} now={0} width={28} height={10} />);
    expect(plain(ui.lastFrame()!)).toContain('   spent —');
  });

  it('every lane that reported tokens shows them in its row, within a list of 80 columns', () => {
    const rows = [
      row('a', { state: 'released', attempt: 1, startedAt: 0, endedAt: 12_000, usage: claude }),
      row('b', { state: 'enrolled', attempt: 2, qaFailures: 1, startedAt: 0, usage: codex }),
      row('cmd', { state: 'released', attempt: 1, startedAt: 0, endedAt: 3_000 }),
      row('d', { state: 'integrated', attempt: 2, usage: claude, health: DRIFT }),
    ];
    const ui = render(<LaneList rows={rows} selected={2} now={65_000} width={28} height={10} />);
    const lines = plain(ui.lastFrame()!).split('\n');
    // (the selected lane is the command's: the others are not selected, and still show theirs)
    expect(lines.find((l) => l.startsWith('  a '))).toMatch(/^ {2}a +released +#1 3\.9k\b/);
    expect(lines.find((l) => l.startsWith('  b '))).toMatch(/^ {2}b +enrolled +qa✗1 2\.6k\b/);
    // (a tag that leaves no room for the tokens says it in a word)
    expect(lines.find((l) => l.startsWith('  d '))).toMatch(/^ {2}d +integrated +drift 3\.9k$/);
    const cmd = lines.find((l) => l.startsWith('› cmd'))!;
    expect(cmd).not.toMatch(/\d(\.\d)?k|tok/);
    expect(cmd).toContain('3s');
    expect(lines).toContain('   spent —');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(28);
    // A wider list (44 columns, a terminal of 96 and up) has room for the word and the time.
    ui.rerender(<LaneList rows={rows} selected={2} now={65_000} width={44} height={10} />);
    expect(plain(ui.lastFrame()!)).toMatch(/^ {2}a +released +#1 3\.9k tok 12s$/m);
  });

  it('the header has the batch’s sum, and none while no lane reported any', () => {
    const s = snapshot([row('a')], { usage: { input_tokens: 6168, output_tokens: 282, cost_usd: null } });
    const ui = render(<Header snapshot={s} now={Date.now()} width={80} />);
    expect(plain(ui.lastFrame()!)).toMatch(/6\.5k tok {2}0\/1 integrated/);
    ui.rerender(<Header snapshot={{ ...s, usage: null }} now={Date.now()} width={80} />);
    expect(plain(ui.lastFrame()!)).not.toContain('tok');
  });
});
