import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { git, splitNul } from '../runner/git.js';

// Whether a repository's settings leave a checkout as plain as lane-checkout.ts writes it:
// every file's bytes exactly its blob's, a v2 index of SHA-1 names with no extension but the
// cached tree, nothing sparse, no attributes anywhere (filters, eol conversion, working-tree
// encodings are all attributes). Read once per repository and process, from `git config
// --list` (every scope, includes followed) and the attribute files git would read. A
// setting not known here to leave a checkout alone makes it git's: the list names what is
// known, not what is feared (docs/DECISIONS.md "A lane checked out by lanes").

/** Sections none of whose settings change what a checkout writes or how git reads the index. */
const SAFE_SECTIONS = new Set(
  (
    'add advice alias am apply author blame branch checkout clean color column commit committer ' +
    'credential diff difftool fetch filter format gc gpg grep gui help http i18n init interactive ' +
    'lanes log maintenance merge mergetool notes pack pager protocol pull push rebase receive remote ' +
    'repack rerere reset safe sendemail sequence showbranch stash status submodule tag trace2 ' +
    'transfer uploadpack url user versionsort web'
  ).split(' '),
);

/** core.* settings that leave a checkout alone (any value), and those that must be off. */
const SAFE_CORE = new Set(
  (
    'abbrev askpass bare bigfilethreshold commentchar commentstring compression deltabasecachelimit ' +
    'editor excludesfile filemode fsync fsyncmethod fsyncobjectfiles hookspath logallrefupdates ' +
    'loosecompression packedgitlimit packedgitwindowsize pager preloadindex protecthfs protectntfs ' +
    'quotepath repositoryformatversion safecrlf sshcommand symlinks untrackedcache whitespace'
  ).split(' '),
);
const OFF_CORE = new Set(['autocrlf', 'sparsecheckout', 'sparsecheckoutcone']);

/** Variables that point git at other files than a lane's own. */
const MOVED_BY_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_INDEX_VERSION', 'GIT_COMMON_DIR'];
MOVED_BY_ENV.push('GIT_OBJECT_DIRECTORY', 'GIT_ATTR_SOURCE');

export function settingIsPlain(key: string, value: string | null): boolean {
  const dot = key.indexOf('.');
  const section = key.slice(0, dot);
  const name = key.slice(key.lastIndexOf('.') + 1);
  if (SAFE_SECTIONS.has(section)) return true;
  if (section !== 'core') return false;
  if (name === 'repositoryformatversion') return value === '0';
  if (OFF_CORE.has(name)) return value === 'false';
  return SAFE_CORE.has(name);
}

/** The attribute files outside the tree git reads for a repository with common dir `commonDir`. */
function attributeFiles(commonDir: string): string[] {
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return [
    join(commonDir, 'info', 'attributes'),
    join(xdg, 'git', 'attributes'),
    '/etc/gitattributes',
    '/usr/local/etc/gitattributes',
  ];
}

const plainByRoot = new Map<string, Promise<boolean>>();

/** Whether checkouts in the repository at `repoRoot` (common dir `commonDir`) are plain. */
export function checkoutIsPlain(repoRoot: string, commonDir: string): Promise<boolean> {
  let known = plainByRoot.get(repoRoot);
  if (!known) {
    known = readPlain(repoRoot, commonDir).catch(() => false);
    plainByRoot.set(repoRoot, known);
  }
  return known;
}

async function readPlain(repoRoot: string, commonDir: string): Promise<boolean> {
  if (MOVED_BY_ENV.some((name) => process.env[name] !== undefined)) return false;
  if (attributeFiles(commonDir).some((file) => existsSync(file))) return false;
  const listed = await git(repoRoot, ['config', '--list', '-z'], { okCodes: [1] });
  if (listed.exitCode !== 0) return false;
  return splitNul(listed.stdout).every((item) => {
    const lf = item.indexOf('\n');
    const key = (lf < 0 ? item : item.slice(0, lf)).toLowerCase();
    return settingIsPlain(key, lf < 0 ? null : item.slice(lf + 1).toLowerCase());
  });
}
