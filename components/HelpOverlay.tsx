import { Box, Text } from 'ink';
import { BINDINGS } from '../src/tui/keymap.js';

/** `?`: every key, generated from the same table as the handlers and the footer. */
export function HelpOverlay() {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="blueBright" paddingX={1}>
      <Text bold>keys</Text>
      {BINDINGS.filter((b) => b.shown).map((b) => (
        <Text key={b.command}>
          <Text color="blueBright">{b.shown.padEnd(8)}</Text>
          {b.help}
        </Text>
      ))}
      <Text>
        <Text color="blueBright">{'ctrl-g'.padEnd(8)}</Text>
        detach from a pane
      </Text>
      <Text dimColor>any key closes this help</Text>
    </Box>
  );
}
