// Sample arguments of the editor.* palette, generated from the page's current view so that each
// sample runs as it is: a path that exists, text that is in the document, the current revisions.

/** Arguments for `name` against `view` (the /api/editor/state snapshot the page renders). */
export function sampleArguments(name, view) {
  const status = view?.status;
  const document = view?.document?.error ? null : view?.document;
  const expectedDocumentRevision = status?.documentRevision;
  const expectedWorkspaceRevision = status?.workspaceRevision;
  const activePath = status?.activePath ?? 'index.html';
  switch (name) {
    case 'editor.openFile':
      return { path: otherTextFile(view, activePath) };
    case 'editor.setDocument':
      return { source: document?.source ?? '', expectedDocumentRevision };
    case 'editor.applyPatch': {
      const search = firstWord(document?.source) ?? 'Counter';
      return { search, replace: `${search} (patched)`, occurrence: 'first', expectedDocumentRevision };
    }
    case 'editor.setScenario':
      return { scenario: nextScenario(view), expectedDocumentRevision };
    case 'editor.resetDocument':
      return { expectedDocumentRevision };
    case 'editor.saveFile':
      return { path: activePath, expectedWorkspaceRevision };
    case 'editor.saveAll':
      return { expectedWorkspaceRevision };
    default:
      return {};
  }
}

/** A text file other than the open one (the open one when it is the only text file). */
function otherTextFile(view, activePath) {
  const texts = (view?.files ?? []).filter((file) => file.kind === 'text').map((file) => file.path);
  return texts.find((path) => path !== activePath) ?? activePath;
}

/** The scenario after the selected one, so the sample visibly changes the preview. */
function nextScenario(view) {
  const names = (view?.scenarios ?? []).map((scenario) => scenario.name);
  if (!names.length) return 'greeting';
  const index = names.indexOf(view?.status?.scenario);
  return names[(index + 1) % names.length];
}

/** The first word of a heading, title or the source, as a search text that is present. */
function firstWord(source) {
  if (!source) return null;
  const heading = /<h1[^>]*>([^<]+)<\/h1>/.exec(source)?.[1];
  const word = (heading ?? source).match(/[A-Za-z][A-Za-z-]{2,}/)?.[0];
  return word ?? null;
}
