import { afterAll, describe, expect, it } from 'vitest';
import { agentBatch, reworkScript } from '../helpers/agent-batch.js';
import { CLI, runCli } from '../helpers/repo.js';
import { terminalEnv, Tmux } from '../helpers/tmux.js';

// Tokens per lane in the TUI (issue 27), in a real terminal of 80×24: the real agent CLIs
// run headless (--host headless) against the scripted model server, which reports a few
// tokens an answer (so the figures are exact, not "12k"); when the batch completes the
// header shows the batch's sum and the selected lane (a) its own, both equal to what the
// server reported (and to status --json).

const tmuxes: Tmux[] = [];
afterAll(async () => {
  await Promise.all(tmuxes.map((t) => t.kill()));
});

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}

describe.each(['claude', 'codex'] as const)('%s in the TUI: tokens per lane', (agent) => {
  it('the header and the selected lane show the tokens the server reported', async () => {
    const batch = `ut-${agent}`;
    const script = { ...reworkScript(), usage: { input_tokens: 20, output_tokens: 3 } };
    const b = await agentBatch(agent, { batch, script });
    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    const argv = [process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes', '--host', 'headless'];
    await tmux.start(argv, { cwd: b.repo, cols: 80, rows: 24 });
    const screen = await tmux.waitFor(/^lanes · ut-\w+ +completed/m, 90_000);
    const reported = b.server.reported();
    const total = reported.input_tokens + reported.output_tokens;
    expect(total).toBeLessThan(1000); // (shown exactly)
    const status = JSON.parse((await runCli(['-C', b.repo, 'status', batch, '--json'])).stdout) as {
      usage: { total: Usage; children: Record<string, { usage: Usage }> };
    };
    expect(status.usage.total.input_tokens + status.usage.total.output_tokens).toBe(total);
    const header = screen.split('\n')[0]!;
    const cost = status.usage.total.cost_usd;
    expect(header).toContain(cost === null ? `${total} tok ` : `${total} tok $${cost.toFixed(2)}`);
    const a = status.usage.children.a!.usage;
    expect(screen).toMatch(new RegExp(`^ {3}spent ${a.input_tokens + a.output_tokens} tok`, 'm'));
    for (const line of screen.split('\n')) expect([...line].length).toBeLessThanOrEqual(80);
    await tmux.kill();
  }, 120_000);
});
