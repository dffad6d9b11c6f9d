import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Where the pinned agent CLIs of the tests live. test/fixtures/agent-clis/install.mjs puts them in a cache
// folder outside the checkout (the README's `npm test` runs it first); this module finds the
// same folder by the same rule. A missing install is a failure with the way out in the
// message, never a skipped test.

const AGENTS = join(import.meta.dirname, '..', 'fixtures', 'agent-clis');
const MARKER = '.lanes-agents-installed';

/** The install folder: `$LANES_AGENTS_CACHE`, else the XDG cache keyed by the lockfile's hash. */
export function agentsDir(): string {
  const fromEnv = process.env.LANES_AGENTS_CACHE;
  if (fromEnv) return fromEnv;
  const digest = createHash('sha256')
    .update(readFileSync(join(AGENTS, 'package-lock.json')))
    .digest('hex')
    .slice(0, 16);
  const cacheRoot = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cacheRoot, 'lanes', 'agents', digest);
}

/** The folder holding the `claude` and `codex` executables. */
export function agentsBinDir(): string {
  const dir = agentsDir();
  if (!existsSync(join(dir, MARKER))) {
    throw new Error(
      `the pinned agent CLIs are not installed in ${dir}: run node test/fixtures/agent-clis/install.mjs (npm test does it first)`,
    );
  }
  return join(dir, 'node_modules', '.bin');
}

function binary(name: 'claude' | 'codex'): string {
  const path = join(agentsBinDir(), name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run node test/fixtures/agent-clis/install.mjs`);
  return path;
}

/** The pinned Claude Code CLI (a native executable). */
export const claudeBin = (): string => binary('claude');

/** The pinned Codex CLI (a node launcher that execs the native `codex`). */
export const codexBin = (): string => binary('codex');

const TEST_API_KEY = 'sk-lanes-test';

/**
 * The environment for a real `claude` against the scripted model server: a private HOME
 * (created under `home`) whose .claude.json has onboarding done and the test API key
 * approved (else two first-run dialogs), and `trust` folders marked trusted (Claude Code
 * keys trust by the canonical git root, so trusting a repository covers its worktrees).
 * PATH keeps the caller's PATH so Bash tool commands and hooks find git/node.
 */
export function claudeEnv(
  home: string,
  serverUrl: string,
  { trust = [] }: { trust?: string[] } = {},
): Record<string, string> {
  mkdirSync(home, { recursive: true });
  const config = join(home, '.claude.json');
  const current = existsSync(config)
    ? (JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown>)
    : {};
  const projects = { ...((current.projects as Record<string, unknown> | undefined) ?? {}) };
  for (const dir of trust) projects[dir] = { hasTrustDialogAccepted: true };
  const next = {
    ...current,
    hasCompletedOnboarding: true,
    customApiKeyResponses: { approved: [TEST_API_KEY.slice(-20)], rejected: [] },
    projects,
  };
  writeFileSync(config, `${JSON.stringify(next, null, 2)}\n`);
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ANTHROPIC_BASE_URL: serverUrl,
    ANTHROPIC_API_KEY: TEST_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    TERM: 'xterm-256color',
  };
}

/** One request the scripted model server received (a line of its JSONL log). */
export interface ServerRequest {
  at: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** The requests logged so far (an absent log is no requests yet). */
export function serverRequests(logFile: string): ServerRequest[] {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ServerRequest);
}

/**
 * The environment for a real `codex` against the scripted model server: a private
 * CODEX_HOME whose config.toml names the server as a custom Responses provider and a model
 * outside Codex's catalog (Codex warns "Model metadata … not found" once and goes on).
 * `extraConfig` goes into config.toml before the provider table (top-level keys such as
 * `notify`); `trust` folders get `trust_level = "trusted"`.
 */
export function codexEnv(
  codexHome: string,
  serverUrl: string,
  { extraConfig = '', trust = [] }: { extraConfig?: string; trust?: string[] } = {},
): Record<string, string> {
  mkdirSync(codexHome, { recursive: true });
  // Codex keys project trust by the git root, so a trusted repository covers its worktrees.
  const trusted = trust.map((dir) => `[projects.${JSON.stringify(dir)}]\ntrust_level = "trusted"\n`);
  // The provider table comes last: top-level keys in `extraConfig` stay top-level.
  const config = [
    'model = "lanes-scripted"',
    'model_provider = "lanes-scripted"',
    extraConfig,
    '',
    '[model_providers.lanes-scripted]',
    'name = "lanes scripted model server"',
    `base_url = "${serverUrl}/v1"`,
    'wire_api = "responses"',
    'env_key = "LANES_SCRIPTED_API_KEY"',
    '',
    ...trusted,
  ].join('\n');
  writeFileSync(join(codexHome, 'config.toml'), config);
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: codexHome,
    CODEX_HOME: codexHome,
    LANES_SCRIPTED_API_KEY: 'sk-lanes-test',
    TERM: 'xterm-256color',
  };
}
