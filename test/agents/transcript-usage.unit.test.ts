import { describe, expect, it } from 'vitest';
import { claudeAgent, claudeTranscriptHolds } from '../../src/agents/claude.js';
import { codexAgent } from '../../src/agents/codex.js';
import { transcriptUsage } from '../../src/agents/transcript-usage.js';

// The Stop hook reads the session's running total from its session file. Claude Code writes
// that file from a queue it drains every 100 ms and runs the Stop hook without draining it:
// read at once, the file can lack the turn's last model call, and no later turn end brings
// that call's tokens (the e2e test agents-usage-tui saw 220 of 240 input tokens under load).

const usage = (input: number, output: number) =>
  `"usage":{"input_tokens":${input},"output_tokens":${output},"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`;
const line = (id: string, content: string, u = usage(20, 3)) =>
  `{"type":"assistant","message":{"id":"${id}","role":"assistant","content":[${content}],${u}}}`;
const TOOL = '{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"src/c.txt"}}';
const SAID = '{"type":"text","text":"The task is done."}';
const USER = '{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}';

/** The file as the hook may find it (its last call not written yet), then whole. */
const BEFORE = [line('msg_1', TOOL), USER, line('msg_2', TOOL), USER].join('\n') + '\n';
const WHOLE = `${BEFORE}${line('msg_3', SAID)}\n`;

describe("the Stop hook's session total", () => {
  it("knows whether Claude's transcript holds the turn's last message yet", () => {
    expect(claudeTranscriptHolds(BEFORE, 'The task is done.')).toBe(false);
    expect(claudeTranscriptHolds(WHOLE, 'The task is done.')).toBe(true);
    expect(claudeTranscriptHolds(WHOLE, 'Something else.')).toBe(false);
    // (one message written as a line per content block: its texts together)
    const split = `${BEFORE}${line('msg_3', '{"type":"text","text":"Done."}')}\n${line('msg_3', '{"type":"text","text":"All of it."}')}\n`;
    expect(claudeTranscriptHolds(split, 'Done.\nAll of it.')).toBe(true);
    expect(claudeTranscriptHolds(split, 'Done.\n\nAll of it.\n')).toBe(true); // (however the blocks are joined)
    expect(claudeTranscriptHolds(split, 'Done.')).toBe(false);
    expect(claudeTranscriptHolds('', 'Done.')).toBe(false);
  });

  it("reads the file again until it holds the turn's last message, then counts every call", async () => {
    const reads: string[] = [];
    const read = () => {
      const text = reads.length < 3 ? BEFORE : WHOLE; // (the agent's queue drained after the third look)
      reads.push(text);
      return text;
    };
    const total = await transcriptUsage(claudeAgent, '/session.jsonl', 'The task is done.', { read });
    expect(total).toEqual({ input_tokens: 60, output_tokens: 9, cost_usd: null });
    expect(reads).toHaveLength(4);
  });

  it('sends what the file holds once the wait is over, and waits for nothing without a last message', async () => {
    let reads = 0;
    const read = () => (reads++, BEFORE);
    const late = await transcriptUsage(claudeAgent, '/s.jsonl', 'The task is done.', { read, waitMs: 60 });
    expect(late).toEqual({ input_tokens: 40, output_tokens: 6, cost_usd: null });
    expect(reads).toBeGreaterThan(1);
    reads = 0;
    expect(await transcriptUsage(claudeAgent, '/s.jsonl', null, { read })).toEqual(late);
    expect(reads).toBe(1);
    // (an agent that says nothing of its file's lag is read once: Codex)
    reads = 0;
    await transcriptUsage(codexAgent, '/rollout.jsonl', 'The task is done.', { read });
    expect(reads).toBe(1);
    // (no file yet, after the wait: no figure, and the turn still ends)
    const missing = () => {
      throw new Error('ENOENT');
    };
    expect(await transcriptUsage(claudeAgent, '/s.jsonl', 'x', { read: missing, waitMs: 30 })).toBeNull();
  });
});
