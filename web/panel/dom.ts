/**
 * The panel's one way of making markup: elements built node by node, text always set as text
 * (never innerHTML), so a member's address or an instance's name cannot become markup.
 */

type Child = Node | string | null | undefined | false;
type Attr = string | boolean | undefined | ((event: Event) => void);

/** An element with attributes (`on…` ones are listeners; true is a bare attribute; false/undefined none) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, Attr> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, '');
    else if (typeof value === 'string') el.setAttribute(name, value);
  }
  for (const child of children) if (child) el.append(child);
  return el;
}

let fieldCount = 0;
/** A labelled control: the label's `for` names the control's id, so each has its accessible name. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement): HTMLElement {
  control.id ||= `f${++fieldCount}`;
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
}

/** A select of `options` (value, text) with `selected` chosen. */
export function select(name: string, options: Array<[string, string]>, selected: string, attrs: Record<string, Attr> = {}): HTMLSelectElement {
  const el = h('select', { name, ...attrs });
  for (const [value, text] of options) el.append(h('option', { value, selected: value === selected }, text));
  return el;
}
