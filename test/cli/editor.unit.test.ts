import { describe, expect, it } from 'vitest';
import { editorArgv } from '../../src/cli/draft/editor.js';

// The editor `e` runs on a drafted plan: $VISUAL, else $EDITOR, else vi, split on
// whitespace into an argv as git splits it (never handed to a shell).

describe('the editor of a drafted plan', () => {
  it('splits the variable on whitespace into an argv', () => {
    expect(editorArgv({ EDITOR: '  code  --wait\t-n ' })).toEqual(['code', '--wait', '-n']);
    expect(editorArgv({ EDITOR: 'vim; rm -rf x' })).toEqual(['vim;', 'rm', '-rf', 'x']);
  });

  it('takes $VISUAL before $EDITOR, and vi when neither is set (or both are blank)', () => {
    expect(editorArgv({ VISUAL: 'nano', EDITOR: 'vim' })).toEqual(['nano']);
    expect(editorArgv({ VISUAL: ' ', EDITOR: 'vim' })).toEqual(['vim']);
    expect(editorArgv({})).toEqual(['vi']);
    expect(editorArgv({ EDITOR: '' })).toEqual(['vi']);
  });
});
