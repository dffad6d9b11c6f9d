import { describe, expect, it } from 'vitest';
import { agentBatch, journal, reworkScript } from '../helpers/agent-batch.js';
import { runCli } from '../helpers/repo.js';

// Tokens per lane (issue 27): the real agent CLIs run headless against the scripted model
// server, which reports usage numbers of the test's choosing; what `lanes status --json`
// and the journal carry equals the sums of what the server reported.

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
}
interface StatusJson {
  usage: {
    total: Usage | null;
    children: Record<string, { usage: Usage | null; attempts: { n: number; usage: Usage | null }[] }>;
  };
}

describe.each(['claude', 'codex'] as const)('%s, headless: tokens per lane', (agent) => {
  it('status --json and the journal carry the sums of what the model server reported', async () => {
    const batch = `u-${agent}`;
    const script = { ...reworkScript(), usage: { input_tokens: 1234, output_tokens: 56 } };
    const b = await agentBatch(agent, { batch, script });
    const r = await runCli(['-C', b.repo, 'start', b.planFile, '--yes', '--headless'], { env: b.env });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const reported = b.server.reported();
    expect(reported.answers).toBeGreaterThan(3);
    const s = await runCli(['-C', b.repo, 'status', batch, '--json']);
    expect(s.exitCode, s.stderr).toBe(0);
    const { usage } = JSON.parse(s.stdout) as StatusJson;
    expect(usage.total).toMatchObject({
      input_tokens: reported.input_tokens,
      output_tokens: reported.output_tokens,
    });
    // Claude Code gives its own cost figure; Codex none.
    if (agent === 'claude') expect(usage.total!.cost_usd).toBeGreaterThan(0);
    else expect(usage.total!.cost_usd).toBeNull();
    // b's two attempts each carry their own.
    const bAttempts = usage.children.b!.attempts;
    expect(bAttempts).toHaveLength(2);
    expect(bAttempts.every((a) => a.usage !== null && a.usage.input_tokens > 0)).toBe(true);
    const sum = (key: 'input_tokens' | 'output_tokens') =>
      journal(b.repo, batch)
        .filter((e) => e.event === 'usage')
        .reduce((n, e) => n + (e[key] as number), 0);
    expect(sum('input_tokens')).toBe(reported.input_tokens);
    expect(sum('output_tokens')).toBe(reported.output_tokens);
  }, 120_000);
});
