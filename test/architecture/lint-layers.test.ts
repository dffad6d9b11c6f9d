import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The layers (docs/ARCHITECTURE.md) are kept by `npm run lint`: this runs the repository's
// own eslint.config.js on imports written the wrong way and the right way, as if they were
// files in the folders named, and checks which ones it refuses.

const ROOT = join(import.meta.dirname, '..', '..');
const CONFIG = join(ROOT, 'eslint.config.js');
// The layer cases are files that do not exist: linted without type information (the
// project service knows only real files); the type-aware cases lint a real file's path.
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfigFile: CONFIG,
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
});
const typed = new ESLint({ cwd: ROOT, overrideConfigFile: CONFIG });

const LAYER_RULES = new Set([
  '@typescript-eslint/no-restricted-imports',
  'layers/rooms',
  'no-restricted-globals',
  'no-restricted-properties',
  'no-restricted-syntax',
]);

/** The layer errors ESLint gives for `code` as the file `filePath`. */
async function layerErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, filePath) });
  const messages = result!.messages;
  // A parse error would make every case below pass for the wrong reason.
  expect(messages.filter((m) => m.fatal)).toEqual([]);
  return messages.filter((m) => m.ruleId !== null && LAYER_RULES.has(m.ruleId)).map((m) => m.message);
}

type Case = [file: string, code: string];

const WRONG_WAY: Case[] = [
  ['src/core/tick/x.ts', "import { git } from '../../../git/runner/git.js';\nexport const a = git;"],
  [
    'src/core/tick/x.ts',
    "import type { BatchFiles } from '../../../store/batch-files.js';\nexport type A = BatchFiles;",
  ],
  [
    'src/core/tick/x.ts',
    "import { readdirSync, readFileSync } from 'node:fs';\nexport const a = readFileSync;",
  ],
  ['src/core/tick/x.ts', "import { join } from 'node:path';\nexport const a = join;"],
  ['src/core/tick/x.ts', "import { spawn } from 'node:child_process';\nexport const a = spawn;"],
  ['src/core/tick/x.ts', "import { createRequire } from 'node:module';\nexport const a = createRequire;"],
  ['src/core/tick/x.ts', "import { tmpdir } from 'node:os';\nexport const a = tmpdir;"],
  ['src/core/tick/x.ts', "import { execa } from 'execa';\nexport const a = execa;"],
  ['src/core/tick/x.ts', "import pty from 'node-pty';\nexport const a = pty;"],
  ['src/core/tick/x.ts', "import { Box } from 'ink';\nexport const a = Box;"],
  ['src/core/tick/x.ts', "import { useState } from 'react';\nexport const a = useState;"],
  ['src/core/tick/x.ts', "import YAML from 'yaml';\nexport const a = YAML;"],
  ['src/core/tick/x.ts', "export { crashPoint } from '../../../process/crash-points.js';"],
  ['src/core/tick/x.ts', 'export const a = process.env.HOME;'],
  ['src/core/tick/x.ts', 'export const a = Date.now();'],
  ['src/core/tick/x.ts', 'export const a = new Date();'],
  ['src/core/tick/x.ts', 'export const a = Math.random();'],
  ['src/core/tick/x.ts', "export const a = () => import('../plan/plan.js');"],
  // Rooms of the core import only the rooms below them.
  ['src/core/records/x.ts', "import { tick } from '../tick/tick.js';\nexport const a = tick;"],
  [
    'src/core/plan/x.ts',
    "import type { BatchRecord } from '../records/record.js';\nexport type A = BatchRecord;",
  ],
  ['src/core/ports/x.ts', "import { drop } from '../ways-out/drop.js';\nexport const a = drop;"],
  [
    'src/core/basics/x.ts',
    "import { scopeMatcher } from '../plan/scope.js';\nexport const a = scopeMatcher;",
  ],
  ['src/core/x.ts', 'export const a = 1;'],
  ['src/process/x.ts', "import { git } from '../git/runner/git.js';\nexport const a = git;"],
  [
    'src/git/runner/x.ts',
    "import { BatchFiles } from '../../store/batch-files.js';\nexport const a = BatchFiles;",
  ],
  ['src/git/runner/x.ts', "import { landBatch } from '../batch/land.js';\nexport const a = landBatch;"],
  ['src/store/x.ts', "import type { Host } from '../hosts/host.js';\nexport type A = Host;"],
  [
    'src/hosts/x.ts',
    "import { Coordinator } from '../coordinator/loop/coordinator.js';\nexport const a = Coordinator;",
  ],
  ['src/qa/x.ts', "import { PtyHost } from '../hosts/pty/pty-host.js';\nexport const a = PtyHost;"],
  [
    'src/coordinator/loop/x.ts',
    "import { batchPorts } from '../../cli/batch-run/batch-ports.js';\nexport const a = batchPorts;",
  ],
  [
    'src/coordinator/loop/x.ts',
    "import { TuiStore } from '../../tui/tui-store.js';\nexport const a = TuiStore;",
  ],
  [
    'src/coordinator/turns/x.ts',
    "import { ExecutorRunner } from '../executors/executor-runner.js';\nexport const a = ExecutorRunner;",
  ],
  ['src/tui/x.ts', "import { makeHost } from '../cli/batch-run/run-batch.js';\nexport const a = makeHost;"],
  ['src/tui/x.ts', "import { App } from '../../components/App.js';\nexport const a = App;"],
  [
    'components/X.tsx',
    "import type { LaneSession } from '../src/hosts/host.js';\nexport type A = LaneSession;",
  ],
  [
    'components/X.tsx',
    "import type { ChildState } from '../src/core/records/record.js';\nexport type A = ChildState;",
  ],
  [
    'components/X.tsx',
    "import { Coordinator } from '../src/coordinator/loop/coordinator.js';\nexport const a = Coordinator;",
  ],
  [
    'components/X.tsx',
    "import { readdirSync, readFileSync } from 'node:fs';\nexport const a = readFileSync;",
  ],
];

const RIGHT_WAY: Case[] = [
  ['src/core/tick/x.ts', "import { tick } from './tick.js';\nexport const a = tick;"],
  [
    'src/core/tick/x.ts',
    "import { applyDrops } from '../ways-out/ways-out.js';\nexport const a = applyDrops;",
  ],
  [
    'src/core/steps/x.ts',
    "import type { BatchRecord } from '../records/record.js';\nexport type A = BatchRecord;",
  ],
  ['src/core/tick/x.ts', "import { z } from 'zod';\nexport const a = z;"],
  ['src/core/tick/x.ts', "import picomatch from 'picomatch';\nexport const a = picomatch;"],
  ['src/core/tick/x.ts', "import { createHash } from 'node:crypto';\nexport const a = createHash;"],
  ['src/core/tick/x.ts', "import type YAML from 'yaml';\nexport type A = typeof YAML;"],
  [
    'src/core/tick/x.ts',
    'export const a = (ports: { clock: { now(): Date } }) => new Date(ports.clock.now());',
  ],
  ['src/process/x.ts', "import { badInput } from '../core/basics/errors.js';\nexport const a = badInput;"],
  [
    'src/git/runner/x.ts',
    "import { killGroup } from '../../process/process-group.js';\nexport const a = killGroup;",
  ],
  ['src/git/ports/x.ts', "import { landBatch } from '../batch/land.js';\nexport const a = landBatch;"],
  ['src/store/x.ts', "import { gitLine } from '../git/runner/git.js';\nexport const a = gitLine;"],
  ['src/hosts/x.ts', "import { readdirSync, readFileSync } from 'node:fs';\nexport const a = readFileSync;"],
  ['src/coordinator/loop/x.ts', "import type { Host } from '../../hosts/host.js';\nexport type A = Host;"],
  [
    'src/coordinator/executors/x.ts',
    "import { BatchFiles } from '../../store/batch-files.js';\nexport const a = BatchFiles;",
  ],
  [
    'src/tui/x.ts',
    "import { Coordinator } from '../coordinator/loop/coordinator.js';\nexport const a = Coordinator;",
  ],
  ['src/cli/x.ts', "import { App } from '../../components/App.js';\nexport const a = App;"],
  ['src/cli/commands/x.ts', "import { TuiStore } from '../../tui/tui-store.js';\nexport const a = TuiStore;"],
  [
    'components/X.tsx',
    "import type { PaneSession } from '../src/tui/pane-session.js';\nexport type A = PaneSession;",
  ],
  [
    'components/X.tsx',
    "import { Box } from 'ink';\nimport { stateColor } from './theme.js';\nexport const a = [Box, stateColor];",
  ],
];

describe('npm run lint keeps the layers', () => {
  it.each(WRONG_WAY)('refuses, in %s: %s', async (file, code) => {
    const errors = await layerErrors(file, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/src\/core|src\/[\w/-]+ may import only|in no room|components\/ import only/);
  });

  it.each(RIGHT_WAY)('accepts, in %s: %s', async (file, code) => {
    expect(await layerErrors(file, code)).toEqual([]);
  });

  it('has a layer for every folder of src/ (a new folder is not left unchecked)', async () => {
    const { FOLDERS } = (await import(join(ROOT, 'eslint.config.js'))) as { FOLDERS: string[] };
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(folders.map((d) => d.name).filter((name) => !FOLDERS.includes(name))).toEqual([]);
  });

  it('refuses a promise nobody awaits (type-aware)', async () => {
    const code = 'export async function f(): Promise<void> {}\nexport function g(): void {\n  f();\n}\n';
    const [result] = await typed.lintText(code, { filePath: join(ROOT, 'src/core/basics/ids.ts') });
    expect(result!.messages.map((m) => m.ruleId)).toContain('@typescript-eslint/no-floating-promises');
  });

  it('refuses a source file over 300 lines', async () => {
    const code = Array.from({ length: 301 }, (_, i) => `export const a${i} = ${i};`).join('\n') + '\n';
    const [result] = await eslint.lintText(code, { filePath: join(ROOT, 'src/core/basics/ids.ts') });
    expect(result!.messages.map((m) => m.ruleId)).toContain('max-lines');
  });

  it('is what `npm run lint` runs', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { lint: string } };
    expect(pkg.scripts.lint).toMatch(/^eslint \. /);
  });
});
