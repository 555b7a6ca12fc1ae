import * as vscode from 'vscode';

/** The one reusable dry-run result view (every dry-run replaces its text; no new tab per run). */
export const DRY_RUN_VIEW = 'Dry-run result.md';

/**
 * Shows a reusable result view (a `reconcile-lab:/view/…` document): when a tab already shows it, that tab is
 * revealed in its group (with the new text); otherwise one editor opens. Never opens a second tab for it.
 */
export async function showResultView(uri: vscode.Uri): Promise<void> {
  const open = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs.map((tab) => ({ g, tab })))
    .find(({ tab }) => tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri.toString());
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: false, ...(open ? { viewColumn: open.g.viewColumn } : {}) });
}
