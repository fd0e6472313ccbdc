// Host API client. Every workspace mutation goes through callTool (POST /api/tools/call, a direct
// local registry call) or an agent run; the page never edits workspace state on its own.

const token = document.querySelector('meta[name="studio-token"]')?.content ?? '';

/** The per-launch token, needed by the event socket. */
export const studioToken = token;

/** Calls a host endpoint; non-2xx responses throw an Error carrying the host's error code. */
export async function api(path, { method = 'GET', body, keepalive = false } = {}) {
  const headers = { 'x-studio-token': token };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, keepalive, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = data?.error ?? { code: `HTTP_${response.status}`, message: text.slice(0, 300) };
    throw Object.assign(new Error(error.message), error);
  }
  return data;
}

/** The tools/call request body for `name` with `args`. */
export function toolsCallRequest(name, args = {}) {
  return { method: 'tools/call', params: { name, arguments: args } };
}

/** A tool's arguments typed as JSON: `{ args }`, or `{ invalid }` saying why they cannot run. */
export function parseToolArguments(text) {
  let args;
  try {
    args = JSON.parse(text || '{}');
  } catch (error) {
    return { invalid: `The arguments are not valid JSON: ${error.message}` };
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return { invalid: 'The arguments must be a JSON object.' };
  return { args };
}

/** Runs one tool through the registry as an explicit local (direct) action. */
export function callTool(name, args = {}, { keepalive = false } = {}) {
  return api('/api/tools/call', { method: 'POST', body: toolsCallRequest(name, args), keepalive });
}

/**
 * Whether an error result's change was applied anyway (`details.committed`): only the preview
 * confirmation failed, so the change is done and must never be repeated.
 */
export function isCommitted(result) {
  return result?.isError === true && result.error?.details?.committed === true;
}

/** What an applied change whose preview confirmation failed reports after its success text. */
export function unconfirmedText(result) {
  return `revision ${result.error.details.revision} · the preview did not confirm it (${result.error.code})`;
}

/** Offers `text` (or a Blob) to the person as a file download. */
export function downloadBlob(fileName, content, type = 'application/json') {
  const blob = content instanceof Blob ? content : new Blob([content], { type });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Offers a `workspace.downloadFile` result ({ fileName, mimeType, encoding, content }) as a download. */
export function downloadWorkspaceFile(file) {
  const content = file.encoding === 'base64'
    ? new Blob([Uint8Array.from(atob(file.content), (c) => c.charCodeAt(0))], { type: file.mimeType })
    : new Blob([file.content], { type: file.mimeType });
  downloadBlob(file.fileName, content);
}

/** Copies text to the clipboard; resolves to whether it worked (clipboard access can be refused). */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}
