// Provider settings: the dialog (model, endpoint, data policy, key, model catalog) and the live
// view of the host's settings. Every tab applies the `settings` event the host publishes on
// each change, so the dialog fields, the agent picker and the agent badge follow a change made
// in another tab (or through the API) without a reload. The key itself never reaches the page;
// only whether one is set.

import { applyAgentChoice } from './agent.js';
import { api } from './api.js';
import { setActiveRun } from './chat.js';
import { $, el } from './dom.js';
import { openModal } from './modal.js';
import { actions, state } from './store.js';

state.settings = null;
const FIELDS = ['settings-model', 'settings-endpoint', 'settings-policy', 'settings-save-key'];
let models = [];

/** Fills the dialog's fields from `settings`; fields the person edited since it opened are kept. */
function fillFields(settings, { force = false } = {}) {
  const values = {
    'settings-model': settings.model,
    'settings-endpoint': settings.endpoint,
    'settings-policy': settings.dataPolicy,
  };
  for (const [id, value] of Object.entries(values)) {
    const field = $(id);
    if (force || field.dataset.edited !== 'true') field.value = value ?? '';
  }
  const saveKey = $('settings-save-key');
  if (force || saveKey.dataset.edited !== 'true') saveKey.checked = Boolean(settings.keySaved);
  $('settings-key').placeholder = settings.hasApiKey ? 'a key is set (leave empty to keep it)' : 'kept in host memory';
}

/** Applies the host's public settings to this tab: dialog fields, agent picker and badge. */
export function applySettings(settings) {
  if (!settings) return;
  state.settings = settings;
  fillFields(settings);
  applyAgentChoice($('agent-select'), settings);
  const badge = $('agent-badge');
  badge.dataset.key = settings.hasApiKey ? 'set' : 'missing';
  badge.title = `Agent mode and state · OpenRouter model ${settings.model} · endpoint ${settings.endpoint} · data policy ${settings.dataPolicy} · key ${settings.hasApiKey ? 'set' : 'not set'}`;
  setActiveRun(state.activeRun);
}

async function openSettings() {
  const settings = await api('/api/settings');
  state.settings = settings;
  for (const id of FIELDS) delete $(id).dataset.edited;
  fillFields(settings, { force: true });
  applySettings(settings);
  $('settings-key').value = '';
  $('settings-error').textContent = '';
  openModal($('settings-dialog'), $('settings-button'), $('settings-model'));
}

async function saveSettings(event) {
  event.preventDefault();
  const body = { model: $('settings-model').value.trim(), endpoint: $('settings-endpoint').value.trim(), dataPolicy: $('settings-policy').value, saveKey: $('settings-save-key').checked };
  if (!body.model) {
    $('settings-error').textContent = 'Enter a model id, for example openai/gpt-4o-mini.';
    return;
  }
  if ($('settings-key').value) body.apiKey = $('settings-key').value;
  try {
    const saved = await api('/api/settings', { method: 'PUT', body });
    $('settings-dialog').close('saved');
    for (const id of FIELDS) delete $(id).dataset.edited;
    applySettings(saved);
    if (saved.keyDropped) actions.status('Settings saved. The endpoint moved to another host, so the API key was dropped: enter it again to use that host.', true);
    else actions.status(saved.hasApiKey ? 'Settings saved; OpenRouter is available.' : 'Settings saved; the local agent answers until a key is set.');
  } catch (error) {
    $('settings-error').textContent = `${error.message} (${error.code})`;
  }
}

/** Loads the provider's tool-capable models into the model field's suggestions. */
async function loadModels() {
  const status = $('settings-models-status');
  status.textContent = 'Loading…';
  try {
    models = (await api('/api/models')).models.filter((model) => model.tools);
    renderModels();
  } catch (error) {
    models = [];
    renderModels();
    status.textContent = '';
    $('settings-error').textContent = error.code === 'OPENROUTER_CONFIGURATION_ERROR'
      ? 'Save an API key first; the model list comes from the provider.'
      : `${error.message} (${error.code})`;
  }
}

function renderModels() {
  const shown = $('settings-free-only').checked ? models.filter((model) => model.free) : models;
  $('settings-models').replaceChildren(...shown.map((model) => el('option', { value: model.id, label: model.label })));
  $('settings-models-status').textContent = models.length ? `${shown.length} of ${models.length} models` : '';
}

/** Wires the settings dialog. */
export function wireSettings() {
  $('settings-button').addEventListener('click', openSettings);
  $('settings-cancel').addEventListener('click', () => $('settings-dialog').close('cancel'));
  $('settings-load-models').addEventListener('click', loadModels);
  $('settings-free-only').addEventListener('change', renderModels);
  $('settings-form').addEventListener('submit', saveSettings);
  for (const id of FIELDS) {
    $(id).addEventListener(id === 'settings-save-key' || id === 'settings-policy' ? 'change' : 'input', () => {
      $(id).dataset.edited = 'true';
    });
  }
}
