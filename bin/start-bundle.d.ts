/** Types of bin/start-bundle.js (plain JavaScript, read by bin/gateway.js before anything else loads). */
export declare const BUNDLE_DIR: string;
export declare const CURRENT_FILE: string;
export type FileStamp = [rel: string, mtimeMs: number, size: number];
export declare function fileStamp(root: string, rel: string): FileStamp;
export declare function freshStartBundle(root: string): string | null;
