/**
 * The slots of the Int32 array the audit thread and the request thread share (`AuditThreadData.done`). Its own
 * module: the request thread must not import the thread's entry file, which runs the thread when loaded in one.
 */
/** The sequence number of the last flush the thread completed. */
export const FLUSHED_SLOT = 0;
/** Rows the thread has written so far. */
export const WRITTEN_SLOT = 1;
/** 1 once the thread has failed: a synchronous flush waiting on `FLUSHED_SLOT` stops waiting. */
export const FAILED_SLOT = 2;
export const SLOT_COUNT = 3;
