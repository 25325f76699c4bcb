import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface GitCommitInfo {
  commit: string;
  /** Unix seconds as a string, as the bundle stores it. */
  timestamp: string;
}

/** HEAD commit and its commit time when `dir` is inside a git checkout, else null. */
export async function readGitCommitInfo(dir: string): Promise<GitCommitInfo | null> {
  try {
    const [head, time] = await Promise.all([
      run('git', ['rev-parse', 'HEAD'], { cwd: dir }),
      run('git', ['log', '-1', '--format=%ct'], { cwd: dir }),
    ]);
    const commit = head.stdout.trim();
    const timestamp = time.stdout.trim();
    if (!/^[0-9a-f]{40,64}$/.test(commit) || !/^\d+$/.test(timestamp)) return null;
    return { commit, timestamp };
  } catch {
    return null;
  }
}
