/**
 * The rows the extension's tree views handed to VS Code. VS Code passes a row back as the first argument of a
 * command run from its context menu or inline button; {@link isViewNode} tells such an invocation (a person
 * clicked) from a call by code with a plain argument object (a test, a script, another extension).
 *
 * Contract: every tree data provider marks each node in its `getTreeItem` (VS Code asks for the item of every row
 * it shows, so a row a person can click is marked). Only a reference to a node kept by the provider matches: a
 * copy never does. Nodes are held weakly (a dropped row is collected).
 */
const nodes = new WeakSet<object>();

/** Records that `node` is a row VS Code shows; returns it. */
export function markViewNode<T extends object>(node: T): T {
  nodes.add(node);
  return node;
}

/** Whether `x` is a row of one of the extension's tree views. */
export function isViewNode(x: unknown): boolean {
  return typeof x === 'object' && x !== null && nodes.has(x);
}
