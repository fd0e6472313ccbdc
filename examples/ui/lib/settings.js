// Provider settings: the dialog (provider profile, base URL, model, data policy, key, "Test
// connection") and the live view of the host's settings. Every tab applies the `settings` event
// the host publishes on each change, so the dialog fields, the agent picker and the agent badge
// follow a change made in another tab (or through the API) without a reload. The key itself
// never reaches the page; only whether one is set and whether the profile needs one.

import { api } from './api.js';
import { $, el } from './dom.js';
import { loadMcpServers } from './mcp-servers.js';
import { openModal } from './modal.js';
import { actions, state } from './store.js';

state.settings = null;
const FIELDS = ['settings-provider', 'settings-base-url', 'settings-model', 'settings-policy', 'settings-save-key'];
const CHANGE_FIELDS = new Set(['settings-provider', 'settings-policy', 'settings-save-key']);
let models = [];
let toolSupport = 'reported';

/** The profile `id` as the host describes it (default base URL, key rule). */
function profileOf(id) {
  return state.settings?.profiles?.find((profile) => profile.id === id) ?? { id, label: id, baseUrl: '', needsKey: true };
}

/** Shows what only applies to OpenRouter (data policy, free filter) and the key rule. */
function showProfileParts() {
  const profile = profileOf($('settings-provider').value);
  const openRouter = profile.id === 'openrouter';
  $('settings-policy-label').hidden = !openRouter;
  $('settings-free-only-label').hidden = !openRouter;
  $('settings-base-url').placeholder = profile.baseUrl;
  $('settings-key-rule').textContent = profile.needsKey
    ? `${profile.label} needs an API key. A key is only sent to https:// or a loopback address.`
    : `${profile.label} on this machine needs no key; leave the key empty.`;
}

/** Fills the dialog's fields from `settings`; fields the person edited since it opened are kept. */
function fillFields(settings, { force = false } = {}) {
  const values = {
    'settings-provider': settings.provider ?? 'openrouter',
    'settings-base-url': settings.baseUrl,
    'settings-model': settings.model,
    'settings-policy': settings.dataPolicy,
  };
  for (const [id, value] of Object.entries(values)) {
    const field = $(id);
    if (force || field.dataset.edited !== 'true') field.value = value ?? '';
  }
  const saveKey = $('settings-save-key');
  if (force || saveKey.dataset.edited !== 'true') saveKey.checked = Boolean(settings.keySaved);
  $('settings-key').placeholder = settings.hasApiKey ? 'a key is set (leave empty to keep it)' : 'kept in host memory';
  showProfileParts();
}

/** Applies the host's public settings to this tab: dialog fields, agent picker and badge. */
export function applySettings(settings) {
  if (!settings) return;
  state.settings = settings;
  fillFields(settings);
  const label = settings.providerLabel ?? 'OpenRouter';
  const badge = $('agent-badge');
  badge.dataset.key = settings.hasApiKey ? 'set' : 'missing';
  badge.title = `Agent mode and state · ${label} model ${settings.model} · endpoint ${settings.endpoint} · data policy ${settings.dataPolicy} · key ${settings.hasApiKey ? 'set' : 'not set'}`;
  actions.settingsChanged(settings);
}

async function openSettings() {
  const settings = await api('/api/settings');
  state.settings = settings;
  for (const id of FIELDS) delete $(id).dataset.edited;
  fillFields(settings, { force: true });
  applySettings(settings);
  $('settings-key').value = '';
  $('settings-error').textContent = '';
  models = [];
  renderModels();
  delete $('mcp-config').dataset.edited;
  loadMcpServers();
  openModal($('settings-dialog'), $('settings-button'), $('settings-provider'));
}

/** A new profile starts from its default base URL and no model (ids differ per provider). */
function changeProvider() {
  const profile = profileOf($('settings-provider').value);
  $('settings-base-url').value = profile.baseUrl;
  $('settings-base-url').dataset.edited = 'true';
  const saved = profile.id === state.settings?.provider;
  $('settings-model').value = saved ? state.settings.model : '';
  $('settings-model').dataset.edited = 'true';
  // A saved key belongs to the saved provider's host; it does not follow a switch.
  $('settings-key').placeholder = saved && state.settings.hasApiKey
    ? 'a key is set (leave empty to keep it)'
    : state.settings?.hasApiKey ? `the saved key stays with ${state.settings.providerLabel}; enter one for ${profile.label}` : 'kept in host memory';
  $('settings-error').textContent = '';
  models = [];
  renderModels();
  showProfileParts();
}

/** The dialog's provider fields as a settings change: the base URL only when the person
 * changed it or the provider (a saved endpoint stays byte for byte otherwise). */
function providerDraft() {
  const draft = { provider: $('settings-provider').value };
  if ($('settings-base-url').dataset.edited === 'true' || draft.provider !== state.settings?.provider) {
    draft.baseUrl = $('settings-base-url').value.trim();
  }
  if (draft.provider === 'openrouter') draft.dataPolicy = $('settings-policy').value;
  if ($('settings-key').value) draft.apiKey = $('settings-key').value;
  return draft;
}

async function saveSettings(event) {
  event.preventDefault();
  const body = { ...providerDraft(), model: $('settings-model').value.trim(), saveKey: $('settings-save-key').checked };
  if (!body.model) {
    $('settings-error').textContent = body.provider === 'openrouter'
      ? 'Enter a model id, for example openai/gpt-4o-mini.'
      : 'Enter a model id, or use Test connection to list the server\'s models.';
    return;
  }
  try {
    const saved = await api('/api/settings', { method: 'PUT', body });
    $('settings-dialog').close('saved');
    for (const id of FIELDS) delete $(id).dataset.edited;
    applySettings(saved);
    if (saved.keyDropped) actions.status('Settings saved. The endpoint moved to another host, so the API key was dropped: enter it again to use that host.', true);
    else actions.status(saved.ready ? `Settings saved; ${saved.providerLabel} is available.` : 'Settings saved; the local agent answers until a key is set.');
  } catch (error) {
    $('settings-error').textContent = `${error.message} (${error.code})`;
  }
}

/** Reads the catalog of the provider the dialog shows (unsaved), listing its models or the
 * coded failure. */
async function testConnection() {
  const status = $('settings-models-status');
  const button = $('settings-test');
  $('settings-error').textContent = '';
  delete $('settings-dialog').dataset.connection;
  status.textContent = 'Connecting…';
  button.disabled = true;
  try {
    const result = await api('/api/settings/test', { method: 'POST', body: providerDraft() });
    // `tools: null` means the provider does not say; only a reported "no" is left out.
    models = result.models.filter((model) => model.tools !== false);
    toolSupport = result.toolSupport;
    if (!$('settings-model').value.trim() && models.length) {
      $('settings-model').value = models[0].id;
      $('settings-model').dataset.edited = 'true';
    }
    renderModels();
    if (!models.length) $('settings-models-status').textContent = 'Connected, but the server lists no tool-capable models.';
    $('settings-dialog').dataset.connection = 'ok';
  } catch (error) {
    models = [];
    renderModels();
    status.textContent = 'Connection failed.';
    $('settings-dialog').dataset.connection = 'failed';
    $('settings-error').textContent = `${error.message} (${error.code})`;
  } finally {
    button.disabled = false;
  }
}

function renderModels() {
  const openRouter = $('settings-provider').value === 'openrouter';
  const shown = openRouter && $('settings-free-only').checked ? models.filter((model) => model.free) : models;
  $('settings-models').replaceChildren(...shown.map((model) => el('option', { value: model.id, label: model.label })));
  const unknown = toolSupport === 'unknown' ? ' (this server does not say which models take tools)' : '';
  const summary = openRouter ? `${shown.length} of ${models.length} tool-capable models` : `${models.length} model${models.length === 1 ? '' : 's'}${unknown}`;
  $('settings-models-status').textContent = models.length ? `Connected: ${summary}` : '';
  delete $('settings-dialog').dataset.connection;
}

/** Wires the settings dialog. */
export function wireSettings() {
  $('settings-button').addEventListener('click', openSettings);
  $('settings-cancel').addEventListener('click', () => $('settings-dialog').close('cancel'));
  $('settings-test').addEventListener('click', testConnection);
  $('settings-free-only').addEventListener('change', renderModels);
  $('settings-provider').addEventListener('change', changeProvider);
  $('settings-form').addEventListener('submit', saveSettings);
  for (const id of FIELDS) {
    $(id).addEventListener(CHANGE_FIELDS.has(id) ? 'change' : 'input', () => {
      $(id).dataset.edited = 'true';
    });
  }
}
