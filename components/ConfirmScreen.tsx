import { Box, Text, useInput } from 'ink';

/** The confirmation of `lanes start`: waves, parallelism, budget, executors; `y` starts. */
export function ConfirmScreen({
  lines,
  onAnswer,
  active,
}: {
  lines: string[];
  onAnswer: (yes: boolean) => void;
  active: boolean;
}) {
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
      {lines.map((line, i) => (
        <Text key={i}>{line}</Text>
      ))}
      <Text>
        <Text color="greenBright">y</Text> start <Text color="red">n</Text> cancel
      </Text>
    </Box>
  );
}
