// Types of scripts/open-vscode.mjs for the TypeScript tests that import it.
export declare const OPEN_VSCODE_USAGE: string;
export type OpenVsCodeArgs = { help: true } | { help: false; browser: boolean; kubeconfig?: string; workspace?: string; port?: number };
export declare function parseOpenVsCodeArgs(args: readonly string[]): OpenVsCodeArgs;
export declare function findDesktopCode(): string | undefined;
