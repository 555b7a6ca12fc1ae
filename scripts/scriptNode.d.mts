// Types of scripts/scriptNode.mjs for the TypeScript tests that import it.
export declare function stripsTypes(version: string): boolean;
export declare function requireScriptNode(name: string): void;
