// The form of a question an MCP server asks during a call (an elicitation's `requestedSchema`:
// flat properties that are text, numbers, booleans or choices), and the values a person filled
// in. The host checks the values against the same schema before passing them on.

import { el } from './dom.js';

/** The fields of `schema`, one labelled control each (named by property). */
export function questionFields(schema) {
  const properties = schema?.properties ?? {};
  const required = new Set(schema?.required ?? []);
  return Object.entries(properties).map(([name, field]) => fieldRow(name, field ?? {}, required.has(name)));
}

function fieldRow(name, field, required) {
  const title = field.title || name;
  const control = fieldControl(name, field, required);
  const hint = field.description ? el('small', { className: 'question-hint', textContent: field.description }) : null;
  if (control.type === 'checkbox') {
    return el('label', { className: 'question-field checkbox' }, control, el('span', { textContent: title }), hint);
  }
  return el('label', { className: 'question-field' }, el('span', { textContent: required ? `${title} *` : title }), control, hint);
}

/** `[value, label]` pairs of an enum (`enum` + optional `enumNames`, or `oneOf` constants). */
function choices(field) {
  if (Array.isArray(field.enum)) return field.enum.map((value, index) => [value, field.enumNames?.[index] ?? String(value)]);
  if (Array.isArray(field.oneOf)) return field.oneOf.map((option) => [option.const, option.title ?? String(option.const)]);
  return null;
}

function fieldControl(name, field, required) {
  const common = { name, required, dataset: { kind: field.type ?? 'string' } };
  if (field.type === 'boolean') return el('input', { ...common, type: 'checkbox', required: false, checked: field.default === true });
  if (field.type === 'array') {
    const options = choices(field.items ?? {}) ?? [];
    return el('select', { ...common, multiple: true }, options.map(([value, label]) => el('option', { value, textContent: label, selected: field.default?.includes?.(value) ?? false })));
  }
  const listed = choices(field);
  if (listed) {
    const blank = required ? null : el('option', { value: '', textContent: '—' });
    return el('select', common, blank, listed.map(([value, label]) => el('option', { value, textContent: label, selected: field.default === value })));
  }
  if (field.type === 'number' || field.type === 'integer') {
    const bounds = { ...(field.minimum !== undefined && { min: field.minimum }), ...(field.maximum !== undefined && { max: field.maximum }) };
    return el('input', { ...common, type: 'number', step: field.type === 'integer' ? '1' : 'any', value: field.default ?? '', attrs: bounds });
  }
  const type = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[field.format] ?? 'text';
  const lengths = { ...(field.minLength !== undefined && { minlength: field.minLength }), ...(field.maxLength !== undefined && { maxlength: field.maxLength }) };
  return el('input', { ...common, type, value: field.default ?? '', attrs: lengths });
}

/** The values of a question form, typed by its schema; empty optional fields are left out. */
export function questionValues(form) {
  const values = {};
  for (const control of form.querySelectorAll('[name]')) {
    const kind = control.dataset.kind;
    if (control.type === 'checkbox') values[control.name] = control.checked;
    else if (control.multiple) values[control.name] = [...control.selectedOptions].map((option) => option.value);
    else if (control.value === '' && !control.required) continue;
    else if (kind === 'number' || kind === 'integer') values[control.name] = Number(control.value);
    else values[control.name] = control.value;
  }
  return values;
}
