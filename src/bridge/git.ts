// Git worktrees for scoped sessions: one worktree per session on its own
// branch `roost/<id>`, removed when the session ends. Removing a worktree
// discards its uncommitted changes; its branch and commits stay in the repo.

import { execFile } from 'node:child_process';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((ok, fail) => {
    execFile('git', ['-C', cwd, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) fail(new Error(`git ${args[0]} failed: ${(stderr || err.message).trim().split('\n').slice(-1)[0]}`));
      else ok(stdout.trim());
    });
  });
}

/** The top folder of the repository holding `dir`, or null when it is not in one. */
export async function repoTop(dir: string): Promise<string | null> {
  try {
    return await git(dir, ['rev-parse', '--show-toplevel']);
  } catch {
    return null;
  }
}

/** Keeps a folder out of `git status` of the repository (its local exclude file, not a tracked .gitignore). */
export async function excludeLocally(top: string, pattern: string): Promise<void> {
  try {
    let common = await git(top, ['rev-parse', '--git-common-dir']);
    if (!isAbsolute(common)) common = resolve(top, common);
    const file = join(common, 'info', 'exclude');
    const now = await readFile(file, 'utf8').catch(() => '');
    if (now.split('\n').some((l) => l.trim() === pattern)) return;
    await mkdir(dirname(file), { recursive: true });
    await appendFile(file, `${now && !now.endsWith('\n') ? '\n' : ''}${pattern}\n`);
  } catch {
    // Cosmetic only: the worktrees still work.
  }
}

/** Adds a worktree at `path` on a new branch (or the existing one of that name), from HEAD. */
export async function addWorktree(top: string, path: string, branch: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const exists = await git(top, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]).then(
    () => true,
    () => false,
  );
  await git(top, exists ? ['worktree', 'add', path, branch] : ['worktree', 'add', '-b', branch, path, 'HEAD']);
}

/** The main repository of a worktree (its common git dir's parent). */
export async function mainRepoOf(worktree: string): Promise<string | null> {
  try {
    let common = await git(worktree, ['rev-parse', '--git-common-dir']);
    if (!isAbsolute(common)) common = resolve(worktree, common);
    return dirname(common);
  } catch {
    return null;
  }
}

/** Removes a worktree, uncommitted changes and all; its branch survives. */
export async function removeWorktree(top: string, path: string): Promise<void> {
  await git(top, ['worktree', 'remove', '--force', path]);
  await git(top, ['worktree', 'prune']).catch(() => undefined);
}
