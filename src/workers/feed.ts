/**
 * @module workers/feed
 * Where a worker's Gatehouse reads its config folder: the file system,
 * keeping what it read for the other workers, or what another worker read.
 * The version `check_ready` shows is the digest of the files of the
 * configuration served, the same in every worker that serves them.
 */
import {
  fileSystemSource,
  recordingDigest,
  recordingSource,
  replaySource,
  type ConfigFileSource,
  type SourceRecording,
} from '../files';

export interface FolderFeed {
  /** What the Gatehouse reads through. */
  readonly source: ConfigFileSource;
  /** The next reading comes from the file system, and is kept. */
  readFiles(): void;
  /** The next reading comes from `recording`. */
  replay(recording: SourceRecording): void;
  /** What the last reading read. */
  lastRead(): SourceRecording;
  /** The files of the last reading are now served. */
  served(): void;
  /** The digest of the files served. */
  readonly version: string | undefined;
}

export function folderFeed(): FolderFeed {
  const recorder = recordingSource(fileSystemSource);
  let from: ConfigFileSource = recorder;
  let replayed: SourceRecording | undefined;
  let version: string | undefined;
  return {
    source: {
      list: (dir) => from.list(dir),
      read: (file, limit) => from.read(file, limit),
    },
    readFiles() {
      replayed = undefined;
      from = recorder;
      recorder.begin();
    },
    replay(recording) {
      replayed = recording;
      from = replaySource(recording);
    },
    lastRead: () => replayed ?? recorder.end(),
    served() {
      version = recordingDigest(replayed ?? recorder.end());
    },
    get version() {
      return version;
    },
  };
}
