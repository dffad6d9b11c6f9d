import { z } from 'zod';
import type { HookMessage, HookReply } from '../core/turns/hook-message.js';
import type { Usage } from '../core/records/usage.js';

// One small interface per coding agent (docs/DECISIONS.md, Agents): how to start a fresh
// or resumed session, interactive (a pane) or headless (CI), with lanes' per-session hook;
// which hooks it runs and how to read their input; how to read the agent's session id;
// how to ask it to quit; how its headless JSON lines read in a transcript. An agent's
// file holds all of it, and the registry (agents.ts) names the file: nothing else in lanes
// names an agent. Adapters only build argv and parse text: no process, no file.

export type { AgentName } from '../core/basics/agent-names.js';
export type AgentMode = 'interactive' | 'headless';

export interface AgentLaunchInput {
  /** The profile's argv with its placeholders filled; `{prompt}` holds what to send now. */
  argv: readonly string[];
  /** Where in `argv` the prompt is (the template's whole `{prompt}` argument), if anywhere. */
  promptIndex: number | null;
  mode: AgentMode;
  /** Continue this conversation instead of starting a new one. */
  resumeSessionId: string | null;
  /** A fresh id for agents that take one at launch (Claude `--session-id`). */
  newSessionId: string;
  /** The lanes hook as an argv (`node <bundle> hook`), completed by the adapter with its kind. */
  hookArgv: readonly string[];
  lanePath: string;
}

export interface AgentLaunch {
  argv: string[];
  /** The session id known before the agent runs, if the adapter chose it. */
  sessionId: string | null;
  /** Turn ends arrive through the hook while the agent stays alive (else: its exit ends the turn). */
  hookTurns: boolean;
}

export interface HookOutput {
  stdout: string;
  exitCode: number;
}

/** What lanes reads of one hook's input (the agent's JSON on the stdin of `lanes hook <kind>`). */
export interface HookInput {
  session_id: string | null;
  /** The agent's last message (of the turn, or its notification), for the transcript. */
  last_message: string | null;
  /** The agent's own session file (Claude's transcript, Codex's rollout), where it has one. */
  transcript_path?: string | null;
}

/** One hook an adapter installs: `lanes hook <kind>` is the command it writes into the agent's settings. */
export interface AgentHook {
  /** What the coordinator hears: a turn end, a notification, a session start. */
  readonly event: HookMessage['kind'];
  /** The agent's hook input, checked and read (a zod schema: its problems become exit 2). */
  readonly input: z.ZodType<HookInput>;
}

export interface AgentAdapter<Name extends string = string> {
  /** Its name in the registry and in a profile's `agent` (src/core/basics/agent-names.ts). */
  readonly name: Name;
  /**
   * A coding agent with sessions: lanes resumes its conversation, renders its headless
   * JSON output, journals its session, and its screen animates while it works. False for
   * a plain command (src/agents/command.ts).
   */
  readonly sessions: boolean;
  /**
   * Its hooks by kind, the last argument of the hook command it installs. Kinds are unique
   * across agents (the registry checks) and never renamed: a live session keeps the
   * command line it was started with across a lanes upgrade.
   */
  readonly hooks: Readonly<Record<string, AgentHook>>;
  launch(input: AgentLaunchInput): AgentLaunch;
  /**
   * What to type into the agent's pane to make it quit by itself, in chunks typed apart
   * (a TUI takes keys that come at once for a paste: Enter would not submit); null: signals only.
   */
  readonly quitKeys: readonly string[] | null;
  /** How a rework instruction reaches a live session: the hook's verdict, or typed into its pane. */
  readonly reworkBy: 'hook' | 'typing';
  /** On an idle screen, these mean "the agent waits for the user" (a permission or trust prompt). */
  readonly promptPatterns: readonly string[];
  /** A session id named in one line of the agent's output (headless JSON), if any. */
  sessionIdFromOutput(line: string): string | null;
  /** What one line of the agent's headless JSON reports it spent (added to the attempt's), if anything. */
  usageFromOutput(line: string): Usage | null;
  /** An interactive session's running total, read from its session file's text (the hook's `transcript_path`). */
  usageFromTranscript?(text: string): Usage | null;
  /**
   * Whether that text holds the turn's last message yet (the hook's `last_message`): the
   * hook reads the file again until it does, for an agent that writes it a moment after the
   * hook starts. Absent: the file is whole when the hook runs.
   */
  transcriptHolds?(text: string, lastMessage: string): boolean;
  /** Whether such a report is new spending (`added`) or the session's running total (`session-total`). */
  readonly usageIs: 'added' | 'session-total';
  /** One headless output line as transcript lines (plain text lines pass through). */
  renderLine(line: string): string[];
  /** What the hook prints and exits with, for the coordinator's reply. */
  hookOutput(reply: HookReply): HookOutput;
  /** A headless run that may read the repository and not change it (`lanes plan draft`); absent: none. */
  readonly readOnly?: ReadOnlyRun;
}

export interface ReadOnlyRun {
  /** The argv of one round: the first (`sessionId` null: `newSessionId` is free to use) or one that continues it. */
  argv(program: string, prompt: string, sessionId: string | null, newSessionId: string): string[];
  /** The session a line of its output names, if any. */
  sessionFrom(line: string): string | null;
  /** The agent's answer a line of its output carries (the last one counts), if any. */
  answerFrom(line: string): string | null;
  /** What the agent said of its own failure (its model unreachable, refused), if a line says so. */
  failureFrom(line: string): string | null;
}

/** A command string for agents that run hooks through a shell: every argument single-quoted. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
}

/** Long enough for any QA run: an agent kills a hook at its timeout (seconds) and stops. */
export const STOP_HOOK_TIMEOUT_S = 3600;

/** A headless transcript line: an event of the agent's JSON stream rendered, any other line as it is. */
export function renderJsonLine(line: string, render: (event: Record<string, unknown>) => string[]): string[] {
  const event = jsonObject(line);
  if (!event) return line.trim() ? [line] : [];
  return render(event);
}

/** A whole number ≥ 0 from an agent's JSON (anything else counts 0). */
export const count = (value: unknown): number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0;

/** Parses a JSON line into an object, or null when it is not one. */
export function jsonObject(line: string): Record<string, unknown> | null {
  const text = line.trim();
  if (!text.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The first line of a text, cut to a width: transcript lines stay readable. */
export function firstLine(text: string, width = 160): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/**
 * Both agents' Stop hooks read the same answer: `{"decision":"block","reason":…}` keeps the
 * agent going in the same session with the reason as its next instruction; nothing lets it stop.
 */
export function blockingStopHookOutput(reply: HookReply): HookOutput {
  if (reply.verdict === 'continue')
    return { stdout: `${JSON.stringify({ decision: 'block', reason: reply.feedback })}\n`, exitCode: 0 };
  return { stdout: '', exitCode: 0 };
}

/**
 * The hook input both agents send (Claude's Stop and Notification, Codex's Stop and
 * SessionStart): JSON with the session id; `keep` names the field whose text lanes keeps.
 */
export function jsonHookInput(keep: 'last_assistant_message' | 'message' | null): z.ZodType<HookInput> {
  return z
    .looseObject({
      session_id: z.string().min(1),
      last_assistant_message: z.string().nullish(),
      message: z.string().nullish(),
      transcript_path: z.string().min(1).nullish(),
    })
    .transform((input) => ({
      session_id: input.session_id,
      last_message: (keep && input[keep]) ?? null,
      ...(input.transcript_path ? { transcript_path: input.transcript_path } : {}),
    }));
}
