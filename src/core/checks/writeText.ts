/**
 * How the robustness checks name one write, in every place they show it: finding titles and explanations, the write
 * lists of the text and Markdown reports, notes, and the editor's results view. One form everywhere, with the
 * subresource after the object as in its API path (and as the Event Log shows writes):
 * "update widgets.lab.reconcile.dev ns/w/status", "create configmaps ns/w-config".
 */
export function writeText(w: { readonly verb: string; readonly resource: string; readonly objectKey: string; readonly subresource?: string | undefined }): string {
  return `${w.verb} ${w.resource} ${w.objectKey}${w.subresource ? `/${w.subresource}` : ''}`;
}
