import { AskPrompt } from './AskPrompt.js';

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
  const s = running === 1 ? '' : 's';
  return (
    <AskPrompt
      lines={[
        `${running} executor${s} still run${running === 1 ? 's' : ''} in this window and will be stopped.`,
        'Their lanes keep the work so far; lanes resume starts them again.',
      ]}
      question="Quit?"
      onAnswer={onAnswer}
      active={active}
    />
  );
}
