// Placeholder: replaced by the page's own module.
import { h } from '../dom.js';

export async function render(root) {
  root.append(h('p', {}, 'This page is being built.'));
}
