/**
 * @module files
 * The files a Gatehouse is configured with, read safely: a size limit, only
 * regular files, and a source that an embedding app may replace.
 */
export {
  BrokenLinkError,
  DEFAULT_FILE_SIZE_LIMIT,
  FileTooLargeError,
  formatBytes,
  NotAFileError,
  readBounded,
  readBoundedSync,
} from './bounded';
export { errorCode, errorText, fileSystemSource, whyUnreadable, type ConfigFileSource } from './source';
export {
  recordingDigest,
  recordingSource,
  replaySource,
  type KeptAnswer,
  type RecordingSource,
  type SourceRecording,
} from './recording';
export { dataRecord, PROTO_KEY_REFUSED } from './data-record';
export { parseByteSize } from './size';
export { NotUtf8Error, readBoundedText, readBoundedTextSync, utf8Text } from './text';
export { parseYamlStream, rewordDepthErrors, yamlDocuments, type YamlStreamOptions } from './yaml';
export { DEFAULT_YAML_LIMITS, YamlLimitError, type YamlLimits } from './yaml-limits';
