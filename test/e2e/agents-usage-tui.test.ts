import { afterAll, describe, expect, it } from 'vitest';
import { agentBatch, journal, reworkScript, untilCompletedAndClosed } from '../helpers/agent-batch.js';
import { until } from '../helpers/until.js';
import { CLI, runCli } from '../helpers/repo.js';
import { terminalEnv, Tmux } from '../helpers/tmux.js';

// Tokens per lane in the TUI (issue 27), in a real terminal of 80×24: the real agent CLIs
// run headless (--host headless) or interactive in their panes against the scripted model server, which reports a few
// tokens an answer (so the figures are exact, not "12k"); when the batch completes the
// header shows the batch's sum, the selected lane (a) its own and every lane's row its own,
// all equal to what the server reported (and to status --json).

const tmuxes: Tmux[] = [];
afterAll(async () => {
  await Promise.all(tmuxes.map((t) => t.kill()));
});

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}

const CASES = [
  ['claude', 'headless'],
  ['codex', 'headless'],
  ['claude', 'interactive'],
  ['codex', 'interactive'],
] as const;

describe.each(CASES)('%s in the TUI (%s): tokens per lane', (agent, mode) => {
  it('the header, the selected lane and every lane’s row show the tokens the server reported', async () => {
    const batch = `ut-${agent}-${mode.slice(0, 1)}`;
    const script = { ...reworkScript(), usage: { input_tokens: 20, output_tokens: 3 } };
    const b = await agentBatch(agent, { batch, script });
    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    // (interactive: each agent in its pane, its usage read from its session file at each turn end)
    const host = mode === 'headless' ? ['--host', 'headless'] : [];
    const argv = [process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes', ...host];
    await tmux.start(argv, { cwd: b.repo, cols: 80, rows: 24 });
    await tmux.waitFor(/^lanes · ut-[\w-]+ +completed/m, 90_000);
    // An interactive session's last call is in its session file once it has closed.
    if (mode === 'interactive') await untilCompletedAndClosed(b.repo, batch);
    // Headless, every request is the agent's own loop; interactive, Claude Code also asks for
    // its session's title (a request with no tools, in no session file): not counted by it.
    const all = b.server.reported();
    const reported = mode === 'headless' ? all : all.session;
    if (mode === 'headless')
      expect(all.session).toEqual({ input_tokens: all.input_tokens, output_tokens: all.output_tokens });
    const total = reported.input_tokens + reported.output_tokens;
    expect(total).toBeLessThan(1000); // (shown exactly)
    const statusNow = async () =>
      JSON.parse((await runCli(['-C', b.repo, 'status', batch, '--json'])).stdout) as {
        usage: { total: Usage; children: Record<string, { usage: Usage }> };
      };
    let seen = '';
    const status = await until(
      async () => {
        const s = await statusNow();
        seen = JSON.stringify(s.usage.total);
        const closed = journal(b.repo, batch).filter((e) => e.event === 'session-closed').length;
        const sum = s.usage.total.input_tokens + s.usage.total.output_tokens;
        return (mode === 'headless' || closed === 3) && sum === total ? s : null;
      },
      'status --json to carry what the server reported',
      { detail: () => seen, everyMs: 300 },
    );
    const cost = status.usage.total.cost_usd;
    // Claude Code gives its cost in headless stream-json only: its interactive transcript has
    // none, so an interactive lane shows tokens alone (Codex gives a cost in neither).
    expect(cost === null).toBe(agent === 'codex' || mode === 'interactive');
    const shown = cost === null ? `${total} tok ` : `${total} tok $${cost.toFixed(2)}`;
    const screen = await tmux.waitFor(new RegExp(`^lanes · .*${shown.replace('$', '\\$')}`, 'm'), 10_000);
    const a = status.usage.children.a!.usage;
    expect(screen).toMatch(new RegExp(`^ {3}spent ${a.input_tokens + a.output_tokens} tok`, 'm'));
    // Every lane's row shows its own tokens, not only the selected one's.
    for (const id of ['a', 'b', 'c']) {
      const u = status.usage.children[id]!.usage;
      expect(screen).toMatch(new RegExp(`^[ ›] ${id} .* ${u.input_tokens + u.output_tokens}( |$)`, 'm'));
    }
    for (const line of screen.split('\n')) expect([...line].length).toBeLessThanOrEqual(80);
    await tmux.kill();
  }, 120_000);
});
