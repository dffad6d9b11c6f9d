import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, makeRepo, tempDir } from './fixtures.js';
import { median, round } from './stats.js';
import type { Figure } from './stats.js';

// 6. memory: peak RSS of the coordinator (a real `lanes start`, pty host) with 8 lanes each
// printing 10 MB. The peak is read from /proc/<pid>/status (VmHWM) while it runs.
// Baseline: the same coordinator on 8 lanes that print nothing.

function plan(bytes: number): object {
  return {
    batch: 'mem',
    max_parallel: 8,
    executor: 'script',
    children: Array.from({ length: 8 }, (_, i) => ({
      id: `m${i}`,
      goal: `print ${bytes} bytes`,
      scope: [`out/m${i}.txt`],
      acceptance: [{ id: 'ok', run: ['true'] }],
      run: `${bytes > 0 ? `yes 'memory check: \x1b[33mcoloured\x1b[0m text that fills the scrollback' | head -c ${bytes}; ` : ''}mkdir -p out && echo ${i} > out/m${i}.txt`,
    })),
  };
}

function peakRssKb(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

async function run(bytes: number): Promise<number> {
  const dir = tempDir('lanes-bench-mem-');
  const repo = await makeRepo(dir);
  const file = join(dir, 'plan.json');
  writeFileSync(file, JSON.stringify(plan(bytes)));
  const child = execa(
    process.execPath,
    [CLI, '-C', repo, 'start', file, '--yes', '--headless', '--host', 'pty'],
    { reject: false },
  );
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, peakRssKb(child.pid!))), 50);
  const result = await child;
  clearInterval(timer);
  if (result.exitCode !== 0) throw new Error(`memory batch failed: ${result.stderr.slice(-400)}`);
  return peak / 1024;
}

export async function memory(runs: number): Promise<Figure> {
  const loaded: number[] = [];
  const idle: number[] = [];
  for (let i = 0; i < runs; i++) {
    idle.push(await run(0));
    loaded.push(await run(10 * 1024 * 1024));
  }
  const value = median(loaded);
  return {
    name: 'memory',
    value,
    min: Math.min(...loaded),
    max: Math.max(...loaded),
    target: 250,
    unit: 'MB',
    met: value <= 250,
    detail: {
      lanes: 8,
      bytes_per_lane: 10 * 1024 * 1024,
      peak_rss_mb: loaded.map(round),
      baseline_peak_rss_mb: idle.map(round),
      ratio_to_baseline: round(value / median(idle)),
    },
  };
}
