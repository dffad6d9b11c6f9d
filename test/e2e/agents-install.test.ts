import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { agentsBinDir, agentsDir, claudeBin, codexBin } from '../helpers/agents.js';
import { tempDir } from '../helpers/repo.js';

// Where the tests find the pinned agent CLIs, and what they say when they are missing: a
// failure that names the way out, never a skipped test.

const saved = { cache: process.env.LANES_AGENTS_CACHE, xdg: process.env.XDG_CACHE_HOME };
afterEach(() => {
  for (const [name, value] of [
    ['LANES_AGENTS_CACHE', saved.cache],
    ['XDG_CACHE_HOME', saved.xdg],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('the pinned agents of the tests', () => {
  it('live in a cache folder outside the checkout, keyed by the lockfile', () => {
    delete process.env.LANES_AGENTS_CACHE;
    process.env.XDG_CACHE_HOME = '/somewhere/cache';
    expect(agentsDir()).toMatch(/^\/somewhere\/cache\/lanes\/agents\/[0-9a-f]{16}$/);
    process.env.LANES_AGENTS_CACHE = '/elsewhere';
    expect(agentsDir()).toBe('/elsewhere');
  });

  it('fail with the command that installs them when the folder has no finished install', () => {
    const empty = tempDir('lanes-agents-missing-');
    mkdirSync(join(empty, 'node_modules', '.bin'), { recursive: true }); // a half-done install
    process.env.LANES_AGENTS_CACHE = empty;
    expect(() => agentsBinDir()).toThrow(/run node test\/fixtures\/agent-clis\/install\.mjs/);
    expect(() => claudeBin()).toThrow(/not installed/);
    expect(() => codexBin()).toThrow(/not installed/);
  });

  it('are installed where the helper looks (the installer prints that folder)', async () => {
    const { stdout } = await execa(process.execPath, [
      join(import.meta.dirname, '..', 'fixtures', 'agent-clis', 'install.mjs'),
    ]);
    expect(stdout.trim()).toBe(agentsBinDir());
    expect((await execa(claudeBin(), ['--version'])).stdout).toContain('2.1.197 (Claude Code)');
    expect((await execa(codexBin(), ['--version'])).stdout).toContain('codex-cli 0.169.0');
  });
});
