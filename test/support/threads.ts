/**
 * @module test/support/threads
 * The threads of this process as the kernel sees them (Linux).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The nice value of each thread of this process, by thread id (Linux). */
export function threadNiceness(): Map<string, number> {
  const nice = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state is field 3, nice field 19.
      nice.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return nice;
}
