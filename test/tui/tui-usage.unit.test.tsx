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

  it('the header has the batch’s sum, and none while no lane reported any', () => {
    const s = snapshot([row('a')], { usage: { input_tokens: 6168, output_tokens: 282, cost_usd: null } });
    const ui = render(<Header snapshot={s} now={Date.now()} width={80} />);
    expect(plain(ui.lastFrame()!)).toMatch(/6\.5k tok {2}0\/1 integrated/);
    ui.rerender(<Header snapshot={{ ...s, usage: null }} now={Date.now()} width={80} />);
    expect(plain(ui.lastFrame()!)).not.toContain('tok');
  });
});
