import { Box, Text, useInput } from 'ink';

/** A yes/no question before something that cannot be taken back (drop, cancel). */
export function AskPrompt({
  lines,
  question,
  onAnswer,
  active,
}: {
  lines: string[];
  question: string;
  onAnswer: (yes: boolean) => void;
  active: boolean;
}) {
  useInput(
    (input, key) => {
      if (input === 'y' || input === 'Y') onAnswer(true);
      else if (input === 'n' || input === 'N' || key.escape || input === 'q') onAnswer(false);
    },
    { isActive: active },
  );
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      {lines.map((line, i) => (
        <Text key={i} dimColor={i > 0}>
          {line}
        </Text>
      ))}
      <Text>
        {question} <Text color="greenBright">y</Text>/<Text color="red">n</Text>
      </Text>
    </Box>
  );
}
