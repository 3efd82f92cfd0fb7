import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Runs a Node script as a child process and SIGKILLs it once `killWhen(stdout)` holds (after
 * `delayMs`), or lets it finish. Resolves with whether it was killed and what it printed; rejects
 * when it exits non-zero on its own.
 */
export function runChild(
  script: string,
  args: readonly string[],
  options: { killWhen?: (stdout: string) => boolean; delayMs?: number } = {},
): Promise<{ killed: boolean; stdout: string }> {
  return new Promise((resolve, reject) => {
    const proc: ChildProcess = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killing = false;
    proc.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (options.killWhen && !killing && options.killWhen(stdout)) {
        killing = true;
        setTimeout(() => proc.kill('SIGKILL'), options.delayMs ?? 0);
      }
    });
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve({ killed: true, stdout });
      else if (code === 0) resolve({ killed: false, stdout });
      else reject(new Error(`child exited ${code}: ${stderr}`));
    });
  });
}
