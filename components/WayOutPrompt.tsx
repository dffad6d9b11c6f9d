import { AskPrompt } from './AskPrompt.js';

// The questions before `D` (drop the selected child) and `C` (cancel the batch).

export type WayOut = { kind: 'drop'; task: string } | { kind: 'cancel' };

export function WayOutPrompt({
  way,
  active,
  onAnswer,
}: {
  way: WayOut;
  active: boolean;
  onAnswer: (yes: boolean) => void;
}) {
  if (way.kind === 'drop')
    return (
      <AskPrompt
        lines={[
          `Drop ${way.task} and every child that depends on it?`,
          'Its executor is stopped; its work stays on its lane branch, its worktree goes to the trash.',
        ]}
        question="Drop?"
        active={active}
        onAnswer={onAnswer}
      />
    );
  return (
    <AskPrompt
      lines={[
        'Cancel the batch? It ends cancelled and cannot be resumed.',
        'Executors are stopped; unintegrated work stays on its lane branches.',
      ]}
      question="Cancel the batch?"
      active={active}
      onAnswer={onAnswer}
    />
  );
}
