import { readFileSync } from 'node:fs';
import type { AgentAdapter } from './agent.js';
import type { Usage } from '../core/records/usage.js';

// What an interactive session spent so far, read by the Stop hook (hook-relay.ts) from the
// session file its input names, to go with the turn end (docs/DECISIONS.md "Interactive
// sessions: the session file at each turn end"). An agent that writes the file a moment
// after its hook starts (Claude Code drains its transcript queue on a timer) has the file
// read again until it holds the turn's last message: nothing else tells the hook when the
// other process has written it. The wait is bounded; after it, what the file holds is sent.

/** How long the hook waits for the turn's last message to reach the file. */
export const TRANSCRIPT_WAIT_MS = 5_000;
const TRANSCRIPT_EVERY_MS = 25;

export interface TranscriptReadOptions {
  /** The file's text (tests); the file itself by default. */
  read?: (path: string) => string;
  waitMs?: number;
}

/**
 * The session's running total (null: no file, nothing in it, or an agent with no session
 * file), once the file holds `lastMessage` or the wait is over.
 */
export async function transcriptUsage(
  agent: AgentAdapter,
  path: string | null,
  lastMessage: string | null | undefined,
  { read = (p) => readFileSync(p, 'utf8'), waitMs = TRANSCRIPT_WAIT_MS }: TranscriptReadOptions = {},
): Promise<Usage | null> {
  if (!path || !agent.usageFromTranscript) return null;
  const holds = agent.transcriptHolds;
  const deadline = Date.now() + waitMs;
  for (;;) {
    let text: string | null = null;
    try {
      text = read(path);
    } catch {
      // not there yet, or unreadable: an unreadable file costs the figure, never the turn
    }
    const whole = !lastMessage?.trim() || !holds || (text !== null && holds(text, lastMessage));
    if (whole || Date.now() >= deadline) return text === null ? null : usageOf(agent, text);
    await new Promise((resolve) => setTimeout(resolve, TRANSCRIPT_EVERY_MS));
  }
}

function usageOf(agent: AgentAdapter, text: string): Usage | null {
  try {
    return agent.usageFromTranscript!(text);
  } catch {
    return null; // (a file it cannot make sense of costs the figure, never the turn)
  }
}
