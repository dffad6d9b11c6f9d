import { Box, Text, useInput } from 'ink';

/**
 * The lines that fit in `rows` rows of `width` columns (a long line wraps over several);
 * where not all fit, the last row says how many are left out and where to read them.
 */
export function fitConfirmLines(lines: readonly string[], width: number, rows: number): string[] {
  const height = (line: string) => Math.max(1, Math.ceil([...line].length / Math.max(1, width)));
  const total = lines.reduce((n, l) => n + height(l), 0);
  if (total <= rows) return [...lines];
  const out: string[] = [];
  let used = 1; // the row that says what is left out
  for (const line of lines) {
    if (used + height(line) > rows) break;
    out.push(line);
    used += height(line);
  }
  out.push(`… ${lines.length - out.length} more lines (lanes plan check <plan> prints them all)`);
  return out;
}

/** A machine's line (src/cli/start/confirm.ts describeMachineViews) in the colour of its state. */
export function machineLineColor(line: string): string | undefined {
  if (!line.startsWith('machine ')) return undefined;
  if (/ {2}left out(: |$)/.test(line) || / {2}lost(: |$)/.test(line)) return 'red';
  if (/ {2}reconnecting(: |$)/.test(line)) return 'yellow';
  if (/ {2}ready(: |$)/.test(line)) return 'green';
  return undefined;
}

/**
 * The confirmation of `lanes start`: waves, parallelism, budget, executors; `y` starts.
 * It fits the terminal (columns × rows): the keys' row is never pushed off the screen.
 */
export function ConfirmScreen({
  lines,
  onAnswer,
  active,
  columns = 80,
  rows = 24,
}: {
  lines: string[];
  onAnswer: (yes: boolean) => void;
  active: boolean;
  columns?: number;
  rows?: number;
}) {
  // The border and padding take four columns; border, title and keys four rows; and the
  // lines lanes printed before the screen (the demo's paths) two more.
  const shown = fitConfirmLines(lines, columns - 4, rows - 7);
  useInput(
    (input, key) => {
      if (input === 'y' || input === 'Y') onAnswer(true);
      else if (input === 'n' || input === 'N' || input === 'q' || key.escape) onAnswer(false);
    },
    { isActive: active },
  );
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="blueBright" paddingX={1}>
      <Text bold>Start this batch?</Text>
      {shown.map((line, i) => (
        <Text key={i} color={machineLineColor(line)}>
          {line}
        </Text>
      ))}
      <Text>
        <Text color="greenBright">y</Text> start <Text color="red">n</Text> cancel
      </Text>
    </Box>
  );
}
