// Types of scripts/labOptions.mjs for the TypeScript tests that import it.
export declare const LAB_USAGE: string;
export declare class LabUsageError extends Error {}
export type LabOptions = { help: true } | { help: false; vscode: boolean; browser: boolean; port: number | undefined; folder: string };
export declare function parseLabArgs(args: readonly string[], context: { cwd: string; root: string }): LabOptions;
