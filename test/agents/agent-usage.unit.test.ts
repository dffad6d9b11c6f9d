import { describe, expect, it } from 'vitest';
import { claudeAgent, claudeTranscriptUsage } from '../../src/agents/claude.js';
import { codexAgent, codexRolloutUsage } from '../../src/agents/codex.js';
import { commandAgent } from '../../src/agents/command.js';
import { kernelRecordSchema, newKernelRecord, startAttempt } from '../../src/core/records/kernel.js';
import { formatUsage } from '../../src/core/records/usage.js';
import { recordUsage } from '../../src/core/turns/turn.js';

// What each adapter reads of its agent's usage, from lines the pinned CLIs printed against
// the scripted model server (3 answers of 100 in / 10 out for Claude, 2 for Codex).

const CLAUDE_RESULT =
  '{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"Done.","session_id":"45d51653","total_cost_usd":0.0022500000000000003,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":30,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard"},"modelUsage":{"claude-opus-4-8[1m]":{"inputTokens":300,"outputTokens":30,"costUSD":0.00225}}}';
const CLAUDE_ASSISTANT =
  '{"type":"assistant","message":{"usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}';
const CODEX_TURN =
  '{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0}}';

describe('agent usage', () => {
  it("reads Claude Code's stream-json result (and not the per-message usage)", () => {
    expect(claudeAgent.usageFromOutput(CLAUDE_RESULT)).toEqual({
      input_tokens: 300,
      output_tokens: 30,
      cost_usd: 0.0022500000000000003,
    });
    expect(claudeAgent.usageFromOutput(CLAUDE_ASSISTANT)).toBeNull();
    expect(claudeAgent.usageIs).toBe('added');
  });

  it("reads Codex's turn.completed, a running total of the thread, with no cost", () => {
    expect(codexAgent.usageFromOutput(CODEX_TURN)).toEqual({
      input_tokens: 200,
      output_tokens: 20,
      cost_usd: null,
    });
    expect(codexAgent.usageIs).toBe('session-total');
    expect(commandAgent.usageFromOutput(CODEX_TURN)).toBeNull();
  });

  it('a resumed session gets what is beyond its earlier attempts; old attempts parse without usage', () => {
    const start = {
      host: 'headless',
      paneId: null,
      pid: null,
      pidStart: null,
      statusPath: null,
      sessionId: 't1',
    };
    let k = newKernelRecord({
      batchId: 'b',
      taskId: 'x',
      runId: 'r',
      lanePath: '/l',
      baseHead: 'a'.repeat(40),
      reviewRequired: false,
      now: 'now',
    });
    k = startAttempt(k, start, 'now');
    k = recordUsage(k, 1, { input_tokens: 200, output_tokens: 20, cost_usd: null }, 'session-total', 'now');
    k = startAttempt(k, start, 'now');
    k = recordUsage(k, 2, { input_tokens: 300, output_tokens: 30, cost_usd: null }, 'session-total', 'now');
    k = recordUsage(k, 2, { input_tokens: 400, output_tokens: 40, cost_usd: null }, 'session-total', 'now');
    expect(k.attempts.map((a) => a.usage?.input_tokens)).toEqual([200, 200]);
    const old = JSON.parse(JSON.stringify(k)) as { attempts: Record<string, unknown>[] };
    for (const a of old.attempts) delete a.usage;
    expect(kernelRecordSchema.parse(old).attempts[0]!.usage).toBeUndefined();
    expect(formatUsage(null)).toBe('—');
    expect(formatUsage({ input_tokens: 12_000, output_tokens: 340, cost_usd: 0.041 })).toBe('12k tok $0.04');
  });

  it('reads an interactive session file: Claude once a model call, Codex its last token_count', () => {
    const call = (id: string, n: number) =>
      JSON.stringify({
        type: 'assistant',
        message: { id, usage: { input_tokens: n, output_tokens: 3, cache_read_input_tokens: 1 } },
      });
    // (two content blocks of one call carry the same id and usage: counted once)
    const transcript = [call('m1', 20), call('m1', 20), '{"type":"user"}', call('m2', 40), ''].join('\n');
    expect(claudeTranscriptUsage(transcript)).toEqual({ input_tokens: 62, output_tokens: 6, cost_usd: null });
    expect(claudeTranscriptUsage('{"type":"user"}\n')).toBeNull();
    const count = (total: number) =>
      JSON.stringify({
        type: 'event_msg',
        payload: {
          type: 'token_count',
          info: {
            total_token_usage: { input_tokens: total, output_tokens: total / 10 },
            last_token_usage: { input_tokens: 100 },
          },
        },
      });
    const rollout = [count(300), '{"type":"response_item","payload":{"type":"message"}}', count(400)].join(
      '\n',
    );
    expect(codexRolloutUsage(rollout)).toEqual({ input_tokens: 400, output_tokens: 40, cost_usd: null });
    expect(codexRolloutUsage('{"type":"event_msg","payload":{"type":"token_count","info":null}}')).toBeNull();
  });
});
