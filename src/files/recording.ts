/**
 * @module files/recording
 * A source of config files that keeps what it answered, and one that
 * answers the same again from what was kept. The workers of one gateway
 * read one folder: the first reads the files and the others are handed
 * what it read, so that a file saved between two reads never gives two
 * workers two configurations. A recording is plain data, for postMessage.
 */
import { createHash } from 'node:crypto';
import { errorCode, SaidReadError, whyUnreadable, type ConfigFileSource } from './source';

/** Why a read or a listing failed, kept as the folder check reports it. */
interface KeptFailure {
  /** What the check says of the file (`is larger than the file size limit ...`). */
  readonly why: string;
  /** The errno code the check tells apart (`ENOENT`, `EISDIR`, `ENOTDIR`). */
  readonly code?: string;
}

/** A folder's names, or why they could not be listed. */
interface KeptListing {
  readonly list: string;
  readonly names?: readonly string[];
  readonly failure?: KeptFailure;
}

/** A file's text, or why it could not be read. */
interface KeptText {
  readonly read: string;
  readonly text?: string;
  readonly failure?: KeptFailure;
}

/** One answer of a source. */
export type KeptAnswer = KeptListing | KeptText;

/** Every answer of one reading of a folder, in the order given. */
export interface SourceRecording {
  readonly answers: readonly KeptAnswer[];
}

function kept(err: unknown): KeptFailure {
  const code = errorCode(err);
  return code === undefined ? { why: whyUnreadable(err) } : { why: whyUnreadable(err), code };
}

/** A source over `inner` that keeps every answer from {@link RecordingSource.begin} until {@link RecordingSource.end}. */
export interface RecordingSource extends ConfigFileSource {
  /** Forgets what was kept, and keeps from now on. */
  begin(): void;
  /** What was kept since `begin`. */
  end(): SourceRecording;
}

export function recordingSource(inner: ConfigFileSource): RecordingSource {
  let answers: KeptAnswer[] = [];
  return {
    begin() {
      answers = [];
    },
    end() {
      return { answers };
    },
    async list(dir) {
      try {
        const names = await inner.list(dir);
        answers.push({ list: dir, names: [...names] });
        return names;
      } catch (err) {
        answers.push({ list: dir, failure: kept(err) });
        throw err;
      }
    },
    async read(file, limit) {
      try {
        const text = await inner.read(file, limit);
        answers.push({ read: file, text });
        return text;
      } catch (err) {
        answers.push({ read: file, failure: kept(err) });
        throw err;
      }
    },
  };
}

/**
 * A source that answers from `recording`: what was not asked when it was
 * made is not there (ENOENT), which a worker reading the same folder the
 * same way never meets.
 */
export function replaySource(recording: SourceRecording): ConfigFileSource {
  const lists = new Map<string, KeptListing>();
  const reads = new Map<string, KeptText>();
  for (const answer of recording.answers) {
    if ('list' in answer) lists.set(answer.list, answer);
    else reads.set(answer.read, answer);
  }
  const missing = () => new SaidReadError('cannot be read (ENOENT)', 'ENOENT');
  return {
    async list(dir) {
      const answer = lists.get(dir);
      if (answer === undefined) throw missing();
      if (answer.failure) throw new SaidReadError(answer.failure.why, answer.failure.code);
      return [...(answer.names ?? [])];
    },
    async read(file) {
      const answer = reads.get(file);
      if (answer === undefined) throw missing();
      if (answer.failure) throw new SaidReadError(answer.failure.why, answer.failure.code);
      return answer.text ?? '';
    },
  };
}

/**
 * A short digest of what a recording read (the files' names and texts, and
 * why those that failed did): equal recordings have equal digests, so two
 * workers that show one have read the same files.
 */
export function recordingDigest(recording: SourceRecording): string {
  const hash = createHash('sha256');
  for (const answer of recording.answers) {
    if ('read' in answer) hash.update(`r\0${answer.read}\0${answer.text ?? `!${answer.failure?.why}`}\0`);
    else hash.update(`l\0${answer.list}\0${answer.names?.join('\0') ?? `!${answer.failure?.why}`}\0`);
  }
  return hash.digest('hex').slice(0, 12);
}
