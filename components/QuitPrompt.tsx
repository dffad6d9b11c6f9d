import { Box, Text, useInput } from 'ink';

/** `q` while in-app executors run: they stop with the app (their lanes keep the work). */
export function QuitPrompt({
  running,
  onAnswer,
  active,
}: {
  running: number;
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
      <Text>
        {running} executor{running === 1 ? '' : 's'} still run{running === 1 ? 's' : ''} in this window and
        will be stopped.
      </Text>
      <Text dimColor>Their lanes keep the work so far; lanes resume starts them again.</Text>
      <Text>
        Quit? <Text color="greenBright">y</Text>/<Text color="red">n</Text>
      </Text>
    </Box>
  );
}
