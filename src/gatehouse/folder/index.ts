/**
 * @module gatehouse/folder
 * The config folder: read through a file source, each file within the size
 * limit, and checked whole (off the event loop when it is large) before
 * anything of it is applied.
 */
export { loadFolder, OFF_THREAD_BYTES, type LoadedFolder, type LoadFolderOptions } from './load';
export { checkTexts, MAX_PROBLEMS, type CheckedFolder } from './check';
export { readFolder, type FolderEntry, type FolderTexts, type FolderWants } from './read';
export { folderReport, MAX_REPORTED_FILES, type FolderCounts, type FolderFile, type FolderReport } from './report';
export { counted, type FileContents, type ReadAs } from './contents';
