// What a person needs from an RBAC refusal: the right that is missing and the line that checks it. Pure text, no
// dependencies: used by the transport (every 403 it answers) and for errors a Go controller's own client reported.

/**
 * What to do about a 403 of kube-apiserver's RBAC authorizer, whose message reads `User "u" cannot <verb> resource
 * "<plural>[/<sub>]" in API group "<group>" in the namespace "<ns>"` (or `at the cluster scope`): the right to ask
 * for and the `kubectl auth can-i` line that checks it. '' for any other message (a webhook's or an admission
 * plugin's refusal names its own reason). The message names the user, never a credential.
 */
export function forbiddenHint(message: string): string {
  const m = /cannot (\S+) resource "([^"/]+)(?:\/([^"]+))?" in API group "([^"]*)" (?:in the namespace "([^"]+)"|at the cluster scope)/.exec(message);
  if (!m) return '';
  const [, verb, plural, sub, group, namespace] = m as unknown as [string, string, string, string | undefined, string, string | undefined];
  const id = group ? `${plural}.${group}` : plural;
  const scope = namespace ? `in namespace ${namespace}` : 'cluster-wide';
  const canI = `kubectl auth can-i ${verb} ${id}${sub ? ` --subresource=${sub}` : ''} ${namespace ? `-n ${namespace}` : '--all-namespaces'}`;
  return `. Missing right: ${verb} on ${id}${sub ? `/${sub}` : ''} ${scope} (ask for it in a ${namespace ? 'Role' : 'ClusterRole'}); check with: ${canI}`;
}

/**
 * `message` with {@link forbiddenHint} appended when it holds an RBAC refusal and does not name the missing right yet
 * (an error a Go controller's client returned: client-go's text is the server's alone); otherwise `message` as is.
 */
export function withForbiddenHint(message: string): string {
  if (message.includes('. Missing right: ')) return message;
  const hint = forbiddenHint(message);
  return hint ? `${message}${hint}` : message;
}

/**
 * The hint of the last RBAC refusal in `text` (a program's stderr: `Error from server (Forbidden): … cannot patch
 * resource "widgets" …`, as kubectl prints it), without its leading ". "; '' when no line holds one. The last, as the
 * refusal that ended the program is usually the last thing it printed.
 */
export function lastForbiddenHint(text: string): string {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const hint = forbiddenHint(lines[i]!);
    if (hint) return hint.replace(/^\. /, '');
  }
  return '';
}
