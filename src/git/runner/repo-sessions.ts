import { BlobWriter } from './blob-writer.js';
import { CommitWriter, readIdentity } from './commit-writer.js';
import type { Identity } from './commit-writer.js';
import { isAncestor } from './commits.js';
import { LooseRefs } from './loose-refs.js';
import { ObjectReader } from './object-reader.js';
import { RefUpdater } from './ref-updater.js';
import { TreeWriter } from './tree-writer.js';

// The long-lived git processes of one repository (object reads, ref transactions, commit,
// tree and blob writes), shared by everything in lanes that works on that repository, and
// the identity its commits get. Each process starts on first use; all end when lanes exits.

export class RepoSessions {
  private static readonly byRoot = new Map<string, RepoSessions>();

  static of(root: string): RepoSessions {
    let found = RepoSessions.byRoot.get(root);
    if (!found) {
      found = new RepoSessions(root);
      RepoSessions.byRoot.set(root, found);
      if (RepoSessions.byRoot.size === 1) process.once('exit', () => RepoSessions.closeAll());
    }
    return found;
  }

  static closeAll(): void {
    for (const sessions of RepoSessions.byRoot.values()) sessions.close();
    RepoSessions.byRoot.clear();
  }

  readonly objects: ObjectReader;
  readonly refs: RefUpdater;
  readonly commits: CommitWriter;
  readonly trees: TreeWriter;
  readonly blobs: BlobWriter;
  private readonly looseRefs: LooseRefs;
  private identity: Promise<Identity> | null = null;

  private constructor(readonly root: string) {
    this.objects = new ObjectReader(root);
    this.refs = new RefUpdater(root);
    // What lanes writes, it can read again without asking git.
    this.commits = new CommitWriter(root, (sha, text) => this.objects.rememberCommit(sha, text));
    this.trees = new TreeWriter(root, (sha, entries) => this.objects.rememberTree(sha, entries));
    this.blobs = new BlobWriter(root);
    this.looseRefs = new LooseRefs(root);
  }

  /** The commit a branch is at (`refs/heads/<branch>^{commit}`), or null when there is no such branch. */
  async branchTip(branch: string): Promise<string | null> {
    // (from its loose file when that names a commit: loose-refs.ts; a commit read once is known)
    const loose = this.looseRefs.branchTip(branch);
    if (loose !== null && (await this.objects.commit(loose)) !== null) return loose;
    if (loose === null && this.looseRefs.surelyAbsent(branch)) return null;
    return this.objects.resolve(`refs/heads/${branch}^{commit}`);
  }

  /** Walked over the cached commits (the batch branch's recent history); a long walk is git's. */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return (await this.objects.reaches(ancestor, descendant)) ?? isAncestor(this.root, ancestor, descendant);
  }

  /** Asked once per repository and process: it does not change mid-batch. */
  ident(): Promise<Identity> {
    this.identity ??= readIdentity(this.root);
    return this.identity;
  }

  /**
   * Starts every process now: at a moment lanes' thread waits anyway (the preflight's git
   * reads), their forks cost it nothing, and the first lane's delivery does not wait for them.
   */
  warm(): void {
    for (const session of this.processes()) session.warm();
  }

  close(): void {
    for (const session of this.processes()) session.close();
  }

  /** Every long-lived git process of the repository (each starts on first use or warm). */
  private processes() {
    return [this.objects, this.refs, this.commits, this.trees, this.blobs];
  }
}
