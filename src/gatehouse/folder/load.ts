/**
 * @module gatehouse/folder/load
 * A config folder read and checked whole, as a start, a reload, `gatehouse
 * check` and `gatehouse serve` take it: the files read through the source
 * (./read), then parsed and validated (./check) on the event loop when they
 * are small, on a worker thread (./off-thread) when they are not.
 */
import { errorText, type ConfigFileSource } from '../../files';
import { configProblem } from '../../gateway';
import { capProblems, checkTexts, type CheckedFolder } from './check';
import { checkOffThread } from './off-thread';
import { readFolder, type FolderTexts, type FolderWants } from './read';
import { folderReport, type FolderReport } from './report';

/**
 * Texts of this many bytes or more are checked on a worker thread. Below
 * it, the check takes a few milliseconds on the event loop: less than
 * starting a thread, as a start from the demo folder would.
 */
export const OFF_THREAD_BYTES = 32 * 1024;

export interface LoadFolderOptions {
  source: ConfigFileSource;
  fileSizeLimit: number;
  annotationDomain?: string;
  /** This gateway's `ambassador_id`. Default `default`. */
  ambassadorId?: string;
  /** Texts of this many bytes or more are checked on a worker thread. Default {@link OFF_THREAD_BYTES}. */
  offThreadBytes?: number;
  /** Calls the check off: its thread ends, and the folder is a problem. */
  signal?: AbortSignal;
}

/** A folder as loaded: the check's findings, with the users file's text (to tell whether it changed). */
export interface LoadedFolder extends CheckedFolder {
  usersText?: string;
  /** Every entry of the folder with what it was read as, and what the folder holds in all. */
  report: FolderReport;
}

function sizeOf(texts: FolderTexts): number {
  let bytes = 0;
  for (const file of [...(texts.records ?? []), ...(texts.limits ?? []), texts.users, texts.bookings])
    bytes += file?.text.length ?? 0;
  return bytes;
}

/**
 * Reads and checks the files of `dir` that `wants` names. Never rejects:
 * anything that fails is a problem naming the file (or the folder, when the
 * checking thread itself failed).
 */
export async function loadFolder(dir: string, wants: FolderWants, options: LoadFolderOptions): Promise<LoadedFolder> {
  const { texts, problems, entries } = await readFolder(dir, wants, options);
  let checked: CheckedFolder;
  try {
    checked =
      sizeOf(texts) >= (options.offThreadBytes ?? OFF_THREAD_BYTES)
        ? await checkOffThread(texts, options.signal)
        : checkTexts(texts);
  } catch (err) {
    const files = [...(texts.records ?? []), ...(texts.limits ?? []), texts.users, texts.bookings].flatMap((f) =>
      f ? [f.file] : [],
    );
    checked = {
      problems: [configProblem({ source: { file: files.join(', ') || dir } }, `cannot be checked: ${errorText(err)}`)],
      warnings: [],
    };
  }
  return {
    ...checked,
    problems: capProblems([...problems, ...checked.problems]),
    usersText: texts.users?.text,
    report: folderReport(dir, entries, checked),
  };
}
