#!/usr/bin/env node
// Installs the pinned agent CLIs the tests run (Claude Code, Codex) into a cache folder
// outside the checkout, so the project's own `npm ci` never downloads ~640 MB of agents and
// a second run costs nothing. See docs/AGENTS.md.
//
//   node test/agents/install.mjs          # prints the bin dir on stdout
//
// The folder is `$LANES_AGENTS_CACHE`, else
// `${XDG_CACHE_HOME:-$HOME/.cache}/lanes/agents/<first 16 hex of sha256(package-lock.json)>`:
// a new lockfile gets a new folder, so a stale install is never reused. The completion
// marker is written last, after both binaries answered `--version`; only then is the
// folder renamed into place.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const MARKER = '.lanes-agents-installed';

/** The cache folder for this lockfile (same rule as test/helpers/agents.ts). */
export function agentsDir() {
  if (process.env.LANES_AGENTS_CACHE) return process.env.LANES_AGENTS_CACHE;
  const lock = readFileSync(join(here, 'package-lock.json'));
  const digest = createHash('sha256').update(lock).digest('hex').slice(0, 16);
  const cacheRoot = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cacheRoot, 'lanes', 'agents', digest);
}

function fail(message) {
  process.stderr.write(`lanes test agents: ${message}\n`);
  process.exit(1);
}

function run(cmd, args, cwd) {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function versionsOf(bin) {
  return {
    claude: run(join(bin, 'claude'), ['--version']).trim(),
    codex: run(join(bin, 'codex'), ['--version']).trim(),
  };
}

function install() {
  const dir = agentsDir();
  const bin = join(dir, 'node_modules', '.bin');
  if (existsSync(join(dir, MARKER))) return bin;

  // Installed next to the target and renamed into place when complete, so two runs at
  // once (or a run killed halfway) never leave a half-installed folder that looks done.
  // The .bin links are relative, so the renamed folder works as it is.
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.installing-`);
  try {
    copyFileSync(join(here, 'package.json'), join(staging, 'package.json'));
    copyFileSync(join(here, 'package-lock.json'), join(staging, 'package-lock.json'));
    process.stderr.write(`lanes test agents: installing the pinned Claude Code and Codex into ${dir} …\n`);
    try {
      // Claude Code's postinstall (`node install.cjs`) copies its native binary over a
      // placeholder: it must run, so scripts stay on (package.json allowScripts names it).
      run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], staging);
    } catch (error) {
      fail(`npm ci in ${staging} failed (network? registry?):\n${error.stderr || error.message}`);
    }
    const stagedBin = join(staging, 'node_modules', '.bin');
    let versions;
    try {
      versions = versionsOf(stagedBin);
    } catch (error) {
      fail(`the installed agents do not start: ${error.message}`);
    }
    const lock = JSON.parse(readFileSync(join(here, 'package-lock.json'), 'utf8'));
    const want = {
      claude: lock.packages['node_modules/@anthropic-ai/claude-code'].version,
      codex: lock.packages['node_modules/@openai/codex'].version,
    };
    if (!versions.claude.startsWith(want.claude) || !versions.codex.endsWith(want.codex)) {
      fail(`installed versions ${JSON.stringify(versions)} are not the pinned ${JSON.stringify(want)}`);
    }
    writeFileSync(
      join(staging, MARKER),
      `${JSON.stringify({ ...versions, installedAt: new Date().toISOString() })}\n`,
    );
    if (existsSync(join(dir, MARKER))) return bin; // another run finished first
    rmSync(dir, { recursive: true, force: true }); // a folder without the marker is unfinished
    renameSync(staging, dir);
    return bin;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${install()}\n`);
}
