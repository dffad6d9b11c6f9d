import { execa } from 'execa';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { Figure } from './stats.js';

// A figure measured in a node process of its own (bench/figure-main.ts), so what it reports
// of its process (peak RSS above all) is its own and not the heap the figures before it left
// in the bench's process. The child prints the figure as the last line of its stdout.

export async function inOwnProcess(name: string, size: number): Promise<Figure> {
  const child = await execa(
    process.execPath,
    [join(import.meta.dirname, 'figure-main.js'), name, String(size)],
    { stdin: 'ignore', reject: false },
  );
  // (its stderr without the terminal codes Ink's exit writes there: what is left is text)
  const said = stripVTControlCharacters(child.stderr).trim();
  if (said) console.error(said);
  const lines = child.stdout.trim().split('\n');
  const last = lines.pop() ?? '';
  // (what the figure prints besides itself, as an in-process figure's would be)
  for (const line of lines) console.log(line);
  if (child.exitCode !== 0 || !last.startsWith('{')) {
    throw new Error(
      `${name} in its own process: exit ${child.exitCode}, stdout ${JSON.stringify(last.slice(0, 200))}`,
    );
  }
  return JSON.parse(last) as Figure;
}
