// Reading `strace -f -yy` output: each system call with its thread, its file descriptor's
// path or socket, its text (arguments, data and result) and the output lines where it started
// and ended (a call another thread interrupted is printed `<unfinished ...>`, then resumed).
import { spawnSync } from 'node:child_process';

export interface Syscall {
  pid: number;
  name: string;
  /** What `-yy` printed for the first argument: a file's path, or `TCP:[local->remote]`. */
  fd: string;
  text: string;
  /** Output line numbers: calls are ordered by when strace saw them start and end. */
  start: number;
  end: number;
}

/** Whether strace can trace a child here (installed, and ptrace allowed). */
export function straceWorks(): boolean {
  return spawnSync('strace', ['-f', '-o', '/dev/null', 'true']).status === 0;
}

const UNFINISHED = ' <unfinished ...>';
const FD = /^\w+\(\d+<((?:TCP|TCPv6|UDP|UNIX):\[[^\]]*\]|[^>]*)>/;

export function parseStrace(output: string): Syscall[] {
  const calls: Syscall[] = [];
  const pending = new Map<number, { name: string; text: string; start: number }>();
  const lines = output.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\d+)\s+(.*)$/.exec(lines[i]!);
    if (m === null) continue;
    const pid = Number(m[1]);
    const rest = m[2]!;
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
    if (resumed !== null) {
      const p = pending.get(pid);
      pending.delete(pid);
      if (p !== undefined) calls.push(call(pid, p.name, p.text + resumed[2]!, p.start, i));
      continue;
    }
    const name = /^(\w+)\(/.exec(rest)?.[1];
    if (name === undefined) continue;
    if (rest.endsWith(UNFINISHED)) pending.set(pid, { name, text: rest.slice(0, -UNFINISHED.length), start: i });
    else calls.push(call(pid, name, rest, i, i));
  }
  return calls;
}

function call(pid: number, name: string, text: string, start: number, end: number): Syscall {
  return { pid, name, fd: FD.exec(text)?.[1] ?? '', text, start, end };
}
