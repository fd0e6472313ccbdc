// Small DOM helpers shared by the views.

/** Element by id. */
export const $ = (id) => document.getElementById(id);

/** Creates an element with properties, attributes (`attrs`) and children. */
export function el(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  const { attrs, dataset, on, ...rest } = props;
  Object.assign(element, rest);
  for (const [name, value] of Object.entries(attrs ?? {})) element.setAttribute(name, value);
  Object.assign(element.dataset, dataset ?? {});
  for (const [event, handler] of Object.entries(on ?? {})) element.addEventListener(event, handler);
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** A plain `type="button"` button. */
export function button(label, onClick, props = {}) {
  return el('button', { type: 'button', textContent: label, on: { click: onClick }, ...props });
}

/** Escapes text for innerHTML. */
export function escapeHtml(text) {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

/** Whether the platform's command modifier (Ctrl, or Cmd on macOS) is held. */
export function commandKey(event) {
  return event.ctrlKey || event.metaKey;
}
