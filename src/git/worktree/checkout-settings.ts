import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { git, splitNul } from '../runner/git.js';

// Whether a repository's settings leave a checkout as plain as lane-checkout.ts writes it:
// every file's bytes exactly its blob's, a v2 index of SHA-1 names with no extension but the
// cached tree, nothing sparse, no attributes anywhere (filters, eol conversion, working-tree
// encodings are all attributes). Read from `git config --list` (every scope, includes
// followed) again whenever a config file changed, and the attribute files git would read. A
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

const xdgDir = () => process.env.XDG_CONFIG_HOME || join(homedir(), '.config');

/** The attribute files outside the tree git reads for a repository with common dir `commonDir`. */
function attributeFiles(commonDir: string): string[] {
  return [
    join(commonDir, 'info', 'attributes'),
    join(xdgDir(), 'git', 'attributes'),
    '/etc/gitattributes',
    '/usr/local/etc/gitattributes',
  ];
}

/** The config files `git config --list` reads (a change to any is read again). */
function configFiles(commonDir: string): string[] {
  const env = process.env;
  return [
    join(commonDir, 'config'),
    env.GIT_CONFIG_GLOBAL ?? join(homedir(), '.gitconfig'),
    join(xdgDir(), 'git', 'config'),
    env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig',
  ];
}

function stampOf(files: readonly string[]): string {
  return files
    .map((file) => {
      try {
        const st = statSync(file, { bigint: true });
        return `${st.ino}:${st.size}:${st.mtimeNs}`;
      } catch {
        return '-';
      }
    })
    .join(' ');
}

/** What a repository's settings allow lanes to do itself. */
export interface PlainSettings {
  /** Check a lane out (lane-checkout.ts). */
  checkout: boolean;
  /** Stage a lane (lane-staging.ts): a plain checkout, file modes trusted and no ignore rules outside the lane. */
  staging: boolean;
}

const NOT_PLAIN: PlainSettings = { checkout: false, staging: false };
/** The settings read by repository, with the stamp of the config files they were read from. */
const listedByRoot = new Map<string, { stamp: string; settings: Promise<Setting[] | null> }>();

interface Setting {
  key: string;
  value: string | null;
}

/**
 * What the repository at `repoRoot` (common dir `commonDir`) lets lanes do itself now: its
 * settings listed by git once and again whenever a config file changed; the attribute and
 * ignore files looked at each time (a few stats).
 */
export async function plainSettings(repoRoot: string, commonDir: string): Promise<PlainSettings> {
  if (MOVED_BY_ENV.some((name) => process.env[name] !== undefined)) return NOT_PLAIN;
  if (attributeFiles(commonDir).some((file) => existsSync(file))) return NOT_PLAIN;
  const stamp = stampOf(configFiles(commonDir));
  let listed = listedByRoot.get(repoRoot);
  if (listed?.stamp !== stamp) {
    listed = { stamp, settings: listSettings(repoRoot).catch(() => null) };
    listedByRoot.set(repoRoot, listed);
  }
  const settings = await listed.settings;
  if (settings === null || !settings.every(({ key, value }) => settingIsPlain(key, value))) return NOT_PLAIN;
  const staging =
    settings.every(
      ({ key, value }) => key !== 'core.excludesfile' && (key !== 'core.filemode' || value === 'true'),
    ) &&
    noRules(join(commonDir, 'info', 'exclude')) &&
    !existsSync(join(xdgDir(), 'git', 'ignore'));
  return { checkout: true, staging };
}

/** Only comments and blank lines (what `git init` writes there). */
function noRules(file: string): boolean {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .every((line) => line.trim() === '' || line.startsWith('#'));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

async function listSettings(repoRoot: string): Promise<Setting[] | null> {
  const listed = await git(repoRoot, ['config', '--list', '-z'], { okCodes: [1] });
  if (listed.exitCode !== 0) return null;
  return splitNul(listed.stdout).map((item) => {
    const lf = item.indexOf('\n');
    const key = (lf < 0 ? item : item.slice(0, lf)).toLowerCase();
    return { key, value: lf < 0 ? null : item.slice(lf + 1).toLowerCase() };
  });
}
